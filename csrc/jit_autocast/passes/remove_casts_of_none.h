// Pass (preoptimization): removes the smart casts of a `Tensor?` that a
// caller, once inlined, passes None to (docs/passes.md).
#pragma once

#include <memory>

namespace torch::jit {
struct Graph;
} // namespace torch::jit

namespace jitamp {

// Returns whether it changed the graph.
bool RemoveCastsOfNone(const std::shared_ptr<torch::jit::Graph>& graph);

} // namespace jitamp
