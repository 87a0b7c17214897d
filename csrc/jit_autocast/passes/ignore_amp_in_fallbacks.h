// Pass (profiling executor plan): keeps the built-in JIT autocast pass out
// of the fallback functions that SuspendAutocastAroundFallbacks cannot reach.
#pragma once

#include <memory>

namespace torch::jit {
struct Graph;
} // namespace torch::jit

namespace jitamp {

// Pass (profiling executor plan): the fallbacks that
// SuspendAutocastAroundFallbacks cannot reach: where a plan needs gradients, the
// profiling executor guards each differentiable subgraph (a
// prim::RequiresGradCheck of its inputs against their profile) in the
// plan's outer graph, on which it runs no custom pass, and makes the
// fallback function right away. A call whose inputs' requires_grad differ
// from the first calls' (a weight, then an input, as the same argument)
// then ran the subgraph's ops with the built-in pass's casts: `mv` in
// bfloat16 under a caller's CPU autocast, where eager keeps it float32
// (fuzz seed 216, index 1488, every torch version).
//
// So jitamp's profiling plan (ProfilingExecutorPlan, pipeline/pipeline.h) starts
// with `jitamp::ignore_amp_in_fallbacks()`, a JIT-only op that does nothing
// when it runs. Its work is done when the interpreter compiles the plan it
// is in, which is after the executor made the plan's fallback functions
// and before they first run: it marks each `ignore_amp` (it then runs the
// executor for autocast off, which the built-in pass leaves alone, while
// its ops still dispatch through eager's autocast under the caller's
// state) and puts the op first in its graph, for the fallbacks of its own
// plans. (A fallback whose executor for autocast off exists already, made
// when the plan was built with autocast off, keeps its plans without the
// op: its own fallbacks, from a third requires_grad pattern, are not
// covered.) Inlined callees' copies of the op are dropped: one per plan.
// Returns whether it changed `plan`.
bool IgnoreAmpInFallbacks(const std::shared_ptr<torch::jit::Graph>& plan);

} // namespace jitamp
