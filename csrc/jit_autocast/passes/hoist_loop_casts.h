// Pass (simple executor plan): a loop's low-precision cast of a value
// defined before the loop is made once, before it
// (jitamp::autocast_to_fp16_before_loop; docs/passes.md).
#pragma once

#include <memory>

namespace torch::jit {
struct Graph;
} // namespace torch::jit

namespace jitamp {

// Does not enter fork subgraphs. Returns whether it changed the graph.
bool HoistLoopCasts(const std::shared_ptr<torch::jit::Graph>& graph);

} // namespace jitamp
