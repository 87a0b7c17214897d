// Pass: a workaround for TorchScript's interpreter, which can lose a value
// read in a loop that it emits inline.
#pragma once

#include <memory>

namespace torch::jit {
struct Graph;
} // namespace torch::jit

namespace jitamp {

// Gives each prim::Loop with one output used once that may lose a value
// when emitted inline (repairs/out_of_line.h) two more loop-carried values, bools
// that each iteration swaps (no op runs), so that it is never emitted
// inline, in the optimized plan too. Recurses into fork subgraphs.
// Idempotent. Returns whether it changed the graph.
// KeepIfsOutOfLine (keep_ifs_out_of_line.h) does the same for ifs.
// Why: docs/passes.md, 'KeepLoopsOutOfLine'.
bool KeepLoopsOutOfLine(const std::shared_ptr<torch::jit::Graph>& graph);

// The same for a plan that no caller inlines and no TorchScript pass
// optimizes further (SimpleExecutorPlan, pipeline/pipeline.h; after it
// unrolls loops): a loop's two bools cost two carried values at every
// iteration, so here each loop loses the carried bools nothing reads
// (those, each returned as the other's next value, and what unrolling made
// of them: after an even number of copies of the body, each returned as it
// came), last loop first (the loop of 8 that unrolling makes feeds its
// bools to the loop for the rest), and one that still needs it
// gets `jitamp::keep_out_of_line()` right after it instead
// (KeepIfsOutOfLine's op: it runs once per loop and does nothing), which
// no longer lines the loop up with its reader. Recurses into fork
// subgraphs. Idempotent. Returns whether it changed the graph.
bool KeepLoopsOutOfLineInPlan(const std::shared_ptr<torch::jit::Graph>& graph);

} // namespace jitamp
