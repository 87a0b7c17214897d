// Pass (simple executor plan, last): ops whose autocast kernel only casts
// become jitamp::direct_call (ops/direct_call.h), which makes the kernel's
// casts itself and calls the op in one dispatch (docs/passes.md).
#pragma once

#include <memory>

namespace torch::jit {
struct Graph;
} // namespace torch::jit

namespace jitamp {

// First runs what the simple executor runs on a plan before compiling it
// (runNooptPassPipeline: its dead code elimination would keep a
// direct_call, an op it cannot see into, where it drops the op). Does not
// enter fork subgraphs (a task's own executor compiles them). Does nothing
// where disabled (SetDirectCallsEnabled). Returns whether it changed the
// graph.
bool CallAutocastOpsDirectly(const std::shared_ptr<torch::jit::Graph>& plan);

// Whether plans built from now on call such ops directly (on by default;
// off: as the interpreter calls any op, through the autocast kernel, for
// measurements and as a way back). Returns the previous setting.
bool SetDirectCallsEnabled(bool enabled);

} // namespace jitamp
