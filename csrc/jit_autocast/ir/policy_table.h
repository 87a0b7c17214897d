// The op policy table: what eager autocast does to each op, per device.
// Rows generated from the torch versions we support
// (policy_table_generated.inc, by tools/gen_policy_table.py; never edited by
// hand) and a few hand-written "implied" rows (policy_table.cpp). A row is
// used on a device only if the installed torch has an autocast kernel there
// for the op (for an implied row: for the op it reaches); ops it autocasts
// that the table lacks are left to the dispatcher and reported
// (PYTORCH_JIT_LOG_LEVEL='>>policy_table', `jitamp table`). Why:
// docs/policy-table.md.
#pragma once

#include <ATen/core/function_schema.h>
#include <c10/core/DeviceType.h>

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
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

const char* policyName(CastPolicy policy);

// An op's name as the table and its listings spell it: "aten::conv2d" for
// the default overload, "aten::conv2d.padding" otherwise.
std::string qualified(const std::string& name, const std::string& overload);

struct EffectivePolicy {
  CastPolicy cpu = CastPolicy::None;
  CastPolicy cuda = CastPolicy::None;
};

// The policy the pass applies to an op (name "aten::conv2d", overload
// "padding" or ""), per device, for the installed torch.
EffectivePolicy effectivePolicy(
    const std::string& name,
    const std::string& overload);

// effectivePolicy by an op's schema, looked up once per operator and pass
// (the table's lookup takes a lock and builds the qualified name).
class PolicyCache {
 public:
  EffectivePolicy of(const c10::FunctionSchema& schema) {
    auto it = policies_.find(&schema);
    if (it == policies_.end()) {
      it = policies_
               .emplace(
                   &schema,
                   effectivePolicy(schema.name(), schema.overload_name()))
               .first;
    }
    return it->second;
  }

 private:
  std::unordered_map<const c10::FunctionSchema*, EffectivePolicy> policies_;
};

// One table row, for listings and checks.
struct TableRow {
  std::string op; // "aten::conv2d.padding"
  CastPolicy cpu; // as the table says
  CastPolicy cuda;
  EffectivePolicy effective; // after asking the installed dispatcher
  std::string via; // implied rows: the op whose autocast kernel eager reaches
};
std::vector<TableRow> tableRows();

// Ops the installed torch autocasts on `device` (CPU or CUDA) for which the
// table has no row: left to the dispatcher.
std::vector<std::string> opsMissingFromTable(c10::DeviceType device);

// What the installed dispatcher has for an op (name "aten::flatten",
// overload "using_ints" or ""): whether it knows it at all (ops TorchScript
// alone registers, e.g. aten::size.int, it does not), an autocast kernel for
// `device` (as the table's rows are checked, test overrides included), a
// CompositeImplicitAutograd kernel.
struct OpKernels {
  bool in_dispatcher = false;
  bool autocast = false;
  bool composite_implicit = false;
};
OpKernels opKernels(
    const std::string& name,
    const std::string& overload,
    c10::DeviceType device);

// CompositeImplicitAutograd ops without an autocast kernel whose
// decomposition reaches no op eager autocasts on CPU or CUDA (an op that
// has an autocast kernel on either is asked of opKernels, not of this
// list): with the state off they compute what eager computes in any state.
// Name with overload: "aten::flatten.using_ints". tests/test_freeze.py
// checks each against eager.
bool isUncastComposite(const std::string& op);

// Ops without an autocast kernel or a CompositeImplicitAutograd one whose
// own CPU kernel calls, through the dispatcher, an op eager autocasts:
// roll's CPU kernel concatenates slices with aten::cat, a promote op under
// CPU autocast, so eager's roll of a float16 tensor in a bfloat16 region
// raises autocast's "Unexpected floating ScalarType" (fuzz seed 271129,
// index 6553). With the state off they may not compute what eager
// computes. Name with overload. tests/test_freeze.py finds them (the
// profiler's nested ops of PyTorch's OpInfo samples, whose outcome a
// region changes) and checks this list against what it finds.
bool kernelCallsAutocastOps(const std::string& op);

// Whether eager autocast may change what an op computes, on some device:
// it has an autocast kernel on CPU or CUDA, or a CompositeImplicitAutograd
// kernel that is not an uncast composite (it may reach an op that has
// one), or a kernel that calls one (kernelCallsAutocastOps). False for
// ops the dispatcher does not know (TorchScript's own: sizes, lists,
// scalars). Such an op's result depends on the thread's
// autocast state, so it must not be computed ahead of time under another
// state (fold_barriers.h).
bool autocastMayChange(const std::string& name, const std::string& overload);

// autocastMayChange, less what the pass's smart casts spell: on a device
// where the op's effective policy casts (lower_precision_fp, fp32, the
// set/append-dtype ones, promote), its autocast kernel only casts what the
// pass casts before it, so an op without casts in front is one the kernel
// leaves alone there (an explicit dtype, a constant already cast). What
// is left: an autocast kernel without such a policy (no table row,
// banned), or a composite that may reach one on a device where the op has
// no autocast kernel of its own.
bool autocastMayChangeUncast(
    const std::string& name,
    const std::string& overload);

// Whether the torch versions the table was generated from disagree on
// autocasting the op on a device (it is new or gone, or its autocast kernel
// came or went): "" where they agree, otherwise where it is autocast
// ("autocast on cuda in torch 2.12.0 to 2.15.0; not in 2.4.1 to 2.11.0",
// devices joined by "; "; only `device`'s, where given). What the passes do
// with such an op: docs/policy-table.md, 'A model rewritten on one torch,
// run on another'.
std::string policyVariesAcrossTorch(
    const std::string& name,
    const std::string& overload,
    std::optional<c10::DeviceType> device = std::nullopt);

// Whether the table has a row for the op (effective or not, implied rows
// included): the ops whose casts the pass owns.
bool inPolicyTable(const std::string& name, const std::string& overload);

// Tests only: pretend the installed torch does (true) or does not (false)
// have an autocast kernel for `op` on `device`; nullopt forgets it.
void overrideAutocastKernelForTesting(
    const std::string& op,
    c10::DeviceType device,
    std::optional<bool> has_kernel);

} // namespace jitamp
