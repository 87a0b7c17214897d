// Pass (profiling executor plan): ends symbolic autodiff's subgraphs where
// a value that may be in lower precision meets another tensor
// (jitamp::autocast_dependent; docs/passes.md).
#pragma once

#include <memory>

namespace torch::jit {
struct Graph;
} // namespace torch::jit

namespace jitamp {

class CallerRegion;

// The boundaries read `region`'s token. Does not enter fork subgraphs.
// Returns whether it changed the graph.
bool InsertAutodiffBoundaries(
    const std::shared_ptr<torch::jit::Graph>& graph,
    CallerRegion& region);

} // namespace jitamp
