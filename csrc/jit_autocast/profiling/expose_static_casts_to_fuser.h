// Pass, run by the profiling executor: shows the TensorExpr fuser the smart
// casts whose autocast state is static, so that it fuses them with their
// neighbours as it fuses the built-in pass's aten casts. Why, which casts
// and why it is exact: docs/passes.md, 'ExposeStaticCastsToFuser'.
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

// The pass, registered as a custom pre-fusion pass, on a graph holding
// prim::profile nodes: replaces jitamp::autocast_to_fp16 / autocast_to_fp32
// of a single tensor by jitamp::fusible_to_fp16 / fusible_to_fp32 (which
// carry the dtype the cast makes) where the input's profile has its dtype
// and device, the fuser fuses on that device, that device type's state is
// static (static_scopes.h), the cast changes the profiled dtype, the graph
// writes neither input nor result, and every fusion group the fuser can
// make of it stays in the cast's innermost scope. Moves a callee's
// caller-region token up to its scope's enter. Does not enter fork
// subgraphs. Returns whether it changed the graph.
bool ExposeStaticCastsToFuser(const std::shared_ptr<torch::jit::Graph>& graph);

// Whether the profiling executor runs the pass; returns the previous
// setting. Off by default: jitamp's casts then stay opaque to the fuser.
bool SetFuserCastsEnabled(bool enabled);

// Whether the pipeline's registered pre pass runs it: enabled above, the
// TensorExpr fuser on, and a fuser that knows jitamp's casts.
bool FuserCastsEnabled();

} // namespace jitamp
