// Pass (simple executor plan, last): ops whose autocast kernel only casts
// become jitamp::direct_call (ops/direct_call.h), which makes the kernel's
// casts itself and calls the op in one dispatch (docs/passes.md).
#pragma once

#include <memory>

namespace torch::jit {
struct Graph;
} // namespace torch::jit

namespace jitamp {

// Each op whose autocast kernel only casts (lower_precision_fp, fp32 or
// promote on CPU or CUDA, the kernel ATen/autocast_mode.cpp registers on
// the installed torch: canCallDirectly, ops/direct_call.h) becomes
// `jitamp::direct_call[op="aten::mm"]`, and the smart casts of a Tensor
// right before it that only it reads go into it (`cast_args`,
// `cast_to_fp32`, `cast_devices`): it makes them first, in their order,
// with the same function.
// First runs what the simple executor runs on a plan before compiling it
// (runNooptPassPipeline: its dead code elimination would keep a
// direct_call, an op it cannot see into, where it drops the op). Does not
// enter fork subgraphs (a task's own executor compiles them). Does nothing
// where disabled (SetDirectCallsEnabled). Returns whether it changed the
// graph.
bool CallAutocastOpsDirectly(const std::shared_ptr<torch::jit::Graph>& plan);

// Whether plans built from now on call such ops directly (on by default;
// off: as the interpreter calls any op, through the autocast kernel, for
// measurements and as a way back; Python:
// jitamp._C.set_direct_calls_enabled). Returns the previous setting.
bool SetDirectCallsEnabled(bool enabled);

} // namespace jitamp
