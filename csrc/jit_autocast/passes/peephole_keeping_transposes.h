// Pass: TorchScript's peephole optimization (shape peepholes off), except
// that `x.t().t()` stays: eager casts the view apart from its base
// (docs/passes.md).
#pragma once

#include <memory>

namespace torch::jit {
struct Graph;
} // namespace torch::jit

namespace jitamp {

// Runs PeepholeOptimize on `graph` with every aten::t of an aten::t kept:
// the peephole pass runs with an aten::alias between the two (which it
// does not fold), removed right after it.
// Returns whether it changed the graph.
bool PeepholeKeepingTransposes(const std::shared_ptr<torch::jit::Graph>& graph);

} // namespace jitamp
