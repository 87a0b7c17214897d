// The op policy table: what eager autocast does to each op, per device.
//
// The facts come from aten/src/ATen/autocast_mode.{h,cpp} of the torch we
// build against (2.13): every op with an AutocastCPU or AutocastCUDA kernel,
// plus ops that TorchScript calls where eager Python reaches a listed op
// through another name. tests/test_policy_table.py compares the table with the
// dispatcher, so a torch upgrade that changes eager's lists fails loudly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace jitamp {

enum class CastPolicy : uint8_t {
  None, // eager autocast leaves the op alone on this device
  LowerPrecisionFp, // all floating inputs to the autocast dtype
  Fp32, // all floating inputs to float32
  Fp32SetOptDtype, // float32 output unless the op's `dtype` is given
  Fp32AppendDtype, // float32 via the dtype-taking overload (norm)
  Promote, // all floating inputs to the widest among them
  Banned, // eager raises (binary_cross_entropy under CUDA autocast)
};

struct OpPolicy {
  const char* name; // "aten::conv2d"
  const char* overload; // "padding", or "" for the default overload
  CastPolicy cpu;
  CastPolicy cuda;
  // True where the op has no autocast kernel of its own on that device but
  // eager reaches one through it (TorchScript calls `aten::nll_loss_nd` where
  // the kernel sits on `aten::nll_loss`): the IR still gets the cast.
  bool cpu_implied = false;
  bool cuda_implied = false;
};

// Policy for an operator name + overload name; nullptr if autocast never
// touches it.
const OpPolicy* lookupPolicy(const std::string& name, const std::string& overload);

const std::vector<OpPolicy>& policyTable();

const char* policyName(CastPolicy policy);

} // namespace jitamp
