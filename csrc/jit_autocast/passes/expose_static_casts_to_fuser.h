// Pass, run by the profiling executor: shows the TensorExpr fuser the smart
// casts whose autocast state is static, so that it fuses them with their
// neighbours as it fuses the built-in pass's aten casts.
//
// jitamp's smart casts read the thread's autocast state when they run, and
// the fuser cannot compile that. Where the IR fixes the state of the
// device type a cast's input was profiled on (static_scopes.h), the cast
// is known: this pass, registered as a custom pre-fusion pass
// (torch/csrc/jit/passes/pass_manager.h; TorchScript runs those in the
// optimized plan of code that does not need gradients, after profiling),
// replaces jitamp::autocast_to_fp16 / autocast_to_fp32 of a single tensor
// whose profiled dtype the cast changes there by jitamp::fusible_to_fp16 /
// fusible_to_fp32, which carry the dtype the cast makes. The fuser knows
// those ops (tensorexpr::getCustomOperatorSet) and lowers them to its own
// cast (the lowering of aten::_autocast_to_reduced_precision: a conversion
// to the fusible cast's dtype, ATen's rounding).
//
// Which casts: the plain-tensor overloads, where
//  - the fuser fuses on the device the input was profiled on (CUDA by
//    default; CPU only with `torch._C._jit_override_can_fuse_on_cpu`);
//  - the profile has the input's dtype and device (TorchScript profiles the
//    values that fusible nodes make: a cast of a graph input or a module
//    attribute has none, and the fuser could not fuse it anyway);
//  - that device type's state is static and the cast changes that dtype
//    (eager's kernel run on an empty tensor under the state says so);
//  - the graph writes neither the input nor the result (alias analysis;
//    a fused group's outputs are new tensors);
//  - every fusion group the fuser can make of it stays in the cast's
//    innermost scope: no reader of the result is a node the fuser takes
//    (the cast's own op is a matmul, a norm, a reduction), and every node
//    the fuser could pull in from the input side is inside the scope. The
//    fuser moves a group's producers down to it and a group down to its
//    consumers, and a group's fallback runs the unfused nodes where the
//    group is, under that point's thread state.
// A callee's caller-region token (inlined code) is moved up to the scope's
// enter, so that it does not stand between the cast and its producers.
//
// Exact by construction: a fusion group runs only on inputs of the types
// it was profiled with (prim::TypeCheck); with those, the cast is a plain
// conversion of a value that a fusible node made (never a leaf, so never
// in eager's cast cache), which eager makes into a new tensor too, with
// ATen's rounding as the fuser's. Everywhere else -- a group's fallback, a cast the fuser
// leaves out -- the fusible ops run the smart cast's own kernel, reading
// the thread's state as before, in the same scope.
#pragma once

#include <memory>

namespace torch::jit {
struct Graph;
} // namespace torch::jit

namespace jitamp {

// Registered by library.cpp. One pointer each: TorchScript's operator
// registry caches lookups by the literal's address.
inline constexpr const char* kFusibleToFp16Schema =
    "jitamp::fusible_to_fp16(Tensor(a) self, str devices, ScalarType dtype, int region) -> Tensor(a)";
inline constexpr const char* kFusibleToFp32Schema =
    "jitamp::fusible_to_fp32(Tensor(a) self, str devices, ScalarType dtype, int region) -> Tensor(a)";

// The pass (above), on a graph holding prim::profile nodes. Returns whether
// it changed the graph.
bool ExposeStaticCastsToFuser(const std::shared_ptr<torch::jit::Graph>& graph);

// Whether the profiling executor runs the pass; returns the previous
// setting. Off (the default until it has been measured and fuzzed on a
// GPU, where the fuser runs by default), jitamp's casts stay opaque to the
// fuser.
bool SetFuserCastsEnabled(bool enabled);

// Whether the pipeline's registered pre pass runs it: enabled above, the
// TensorExpr fuser on, and a fuser that knows jitamp's casts.
bool FuserCastsEnabled();

} // namespace jitamp
