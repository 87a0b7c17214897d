// Pass: KeepLoopsOutOfLine's workaround for TorchScript's interpreter, for
// an if with a loop in its blocks.
#pragma once

#include <memory>

namespace torch::jit {
struct Graph;
} // namespace torch::jit

namespace jitamp {

// Puts `jitamp::keep_out_of_line()` (does nothing; no pass removes it)
// right after each prim::If with one output used once that may lose a value
// read in a loop of its blocks when emitted inline (repairs/out_of_line.h), so
// that it no longer lines up with its reader. For the graphs jitamp's
// executors compile (SimpleExecutorPlan and ProfilingExecutorPlan,
// pipeline/pipeline.h), never a saved graph. Does not enter fork
// subgraphs. Idempotent. Returns whether it changed the graph.
// Why: docs/passes.md, 'KeepIfsOutOfLine'.
bool KeepIfsOutOfLine(const std::shared_ptr<torch::jit::Graph>& graph);

} // namespace jitamp
