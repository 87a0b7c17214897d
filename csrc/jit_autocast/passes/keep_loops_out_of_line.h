// Pass: a workaround for TorchScript's interpreter, which can lose a value
// read in a loop that it emits inline.
#pragma once

#include <memory>

namespace torch::jit {
struct Graph;
} // namespace torch::jit

namespace jitamp {

// TorchScript's interpreter (runtime/interpreter/can_emit_inline.h) emits a
// node whose one output has one use at that use, when the nodes line up; a
// prim::Loop with one output qualifies. It moves a value out of its register
// at the use it emits last, and emitting the loop inline puts the loop's
// reads after the reads of the node that uses the loop's result. So in
//
//   for i in range(2):
//       y = x + 1
//       for j in range(2):      # one output (v), used once, by the
//           print(trace(y))     # outer body's return (y, v)
//           v = x
//
// `y` is moved out in the inner loop's first iteration and its second
// iteration reads None ("Expected Tensor but got None"). Plain TorchScript
// fails alike wherever its optimizer does not unroll the loop; jitamp's
// simple executor never unrolls, so fuzz finding 6 met it with constant trip
// counts too.
//
// The pass gives each such loop two more loop-carried values, bools that
// each iteration swaps (no op runs), so that it is never emitted inline:
// where its body reads a value (not a constant) from outside it that a
// later node of its block (or the block's return) also reads, or, for a
// loop whose result the graph returns (a callee inlined into its caller), a
// graph input. They survive TorchScript's dead code elimination and constant
// propagation, so the optimized plan keeps them too. Recurses into fork
// subgraphs. Idempotent. Returns whether it changed the graph.
bool KeepLoopsOutOfLine(const std::shared_ptr<torch::jit::Graph>& graph);

// The same for a prim::If with one output used once, with a loop in its
// blocks that reads a value that a later node of the if's block also reads:
// emitted inline where the node that reads its result reads that value
// first, the loop's read is the use emitted last, which moves the value out
// in the first iteration, and the next reads None ("Expected Tensor but got
// None"; fuzz seed 1134, index 6768; plain TorchScript's legacy executor
// fails alike). A read in the if's blocks outside any loop runs once, and
// moving the value there loses nothing. An if has no carried values to add, and an
// output nothing reads goes in dead code elimination: the if gets
// `jitamp::keep_out_of_line()` right after it, an op that does nothing and
// that no pass removes, so that it no longer lines up with its reader. For
// the graphs jitamp's executors compile (SimpleExecutorPlan and
// ProfilingExecutorPlan, pipeline/pipeline.h), never a saved graph. Idempotent.
// Returns whether it changed the graph.
bool KeepIfsOutOfLine(const std::shared_ptr<torch::jit::Graph>& graph);

} // namespace jitamp
