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

// A value that may be in lower precision (made by a jitamp cast to it or by
// an op the policy runs in lower precision, or computed from those; not a
// float32 cast's result, where the cast is one for every device type) is
// read through `jitamp::autocast_dependent`, an identity symbolic autodiff
// has no formula for, by each op (not jitamp's) that reads two tensors or
// more; an op that reads a raised value (made by a float32 or promote
// cast, or computed from one) reads every tensor so. Each boundary is made
// right before the first op of its block that needs it (later ones there
// share it). The boundaries read `region`'s token. Does not enter fork
// subgraphs. Returns whether it changed the graph.
bool InsertAutodiffBoundaries(
    const std::shared_ptr<torch::jit::Graph>& graph,
    CallerRegion& region);

} // namespace jitamp
