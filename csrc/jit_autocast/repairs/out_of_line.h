// Which loops and ifs TorchScript's interpreter may emit inline and then
// lose a value read in a loop (runtime/interpreter/can_emit_inline.h).
// Shared by KeepLoopsOutOfLine and KeepIfsOutOfLine.
#pragma once

namespace torch::jit {
struct Node;
} // namespace torch::jit

namespace jitamp {

// Whether `node` (a loop or an if) may be emitted inline and then lose a
// value: its blocks read one (not a constant) in a loop that a later node
// of its block (or the block's return) reads too, or, its result returned
// by the graph, a graph input (for callers that inline it). Emitted
// inline, the node that reads its result loads its other inputs first, so
// the loop's read may be the use emitted last.
bool needsKeepingOutOfLine(torch::jit::Node* node);

// Puts `jitamp::keep_out_of_line()` right after `node` (an op that does
// nothing, CONSERVATIVE, so no pass removes it), unless one is there: the
// node then no longer lines up with the node that reads its result. Returns
// whether it put one. For plans only: a saved graph stays plain TorchScript
// there (KeepLoopsOutOfLine's carried bools).
bool putKeepOutOfLineAfter(torch::jit::Node* node);

} // namespace jitamp
