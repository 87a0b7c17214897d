// Pass (profiling executor plan): keeps the built-in JIT autocast pass out
// of the fallback functions that SuspendAutocastAroundFallbacks cannot reach.
#pragma once

#include <memory>

namespace torch::jit {
struct Graph;
} // namespace torch::jit

namespace jitamp {

// Puts `jitamp::ignore_amp_in_fallbacks()` first in `plan` (the profiling
// executor's, ProfilingExecutorPlan in pipeline/pipeline.h) and drops the
// copies inlined callees brought. The op, JIT-only, does nothing when it
// runs; when the interpreter compiles its plan it marks each fallback
// function the plan calls `ignore_amp` and puts the op first in every
// graph its later plans are made from (graph_function_state.h,
// startingGraphs), so they mark their own fallbacks in turn. The pass does
// not enter fork subgraphs. Idempotent: a plan that starts with the op is
// left as it is. Returns whether it changed `plan`.
// Why: docs/passes.md, 'IgnoreAmpInFallbacks'.
bool IgnoreAmpInFallbacks(const std::shared_ptr<torch::jit::Graph>& plan);

} // namespace jitamp
