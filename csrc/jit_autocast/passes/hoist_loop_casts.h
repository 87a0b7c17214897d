// Pass (simple executor plan): a loop's low-precision cast of a value
// defined before the loop is made once, before it
// (jitamp::autocast_to_fp16_before_loop; docs/passes.md).
#pragma once

#include <memory>

namespace torch::jit {
struct Graph;
} // namespace torch::jit

namespace jitamp {

// Taken: a single-tensor cast directly in the body of a loop (the first
// iteration reaches it) whose body changes no state a cast reads (no
// scope, prim::Enter/Exit, set_grad_enabled, call, fork, wait or other
// jitamp op), of a value that no op in the graph writes (AliasDb), read by
// ops that do not write it; a module attribute the body reads counts as
// defined before the loop where no prim::SetAttr of the graph sets an
// attribute of that name, and is read once more before the loop for it.
// Inner loops first; a cast made before an inner loop stays in the outer
// loop's body. What the op gives (the first iteration's cast, or its input
// where eager casts at each iteration): ops/cast_ops.cpp. Does not enter
// fork subgraphs. Returns whether it changed the graph.
bool HoistLoopCasts(const std::shared_ptr<torch::jit::Graph>& graph);

} // namespace jitamp
