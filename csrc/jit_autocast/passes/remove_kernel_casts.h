// Pass (simple executor plan): removes the smart casts that an op's own
// autocast kernel makes anyway (docs/passes.md).
#pragma once

#include <memory>

namespace torch::jit {
struct Graph;
} // namespace torch::jit

namespace jitamp {

// Keeps the casts of an op outside any loop that reads a value that may be
// a weight (a graph input or a prim::GetAttr result), and list casts; an
// op's casts go or stay together. Does not
// enter fork subgraphs. Idempotent. Returns whether it changed the graph.
bool RemoveKernelCasts(const std::shared_ptr<torch::jit::Graph>& graph);

} // namespace jitamp
