// Pass (first of the rewrite): a graph in which a value is used outside the
// block that defines it becomes one where it is not, by passing it out of
// the enclosing prim::If nodes as an output (prim::Uninitialized from the
// other branch), as TorchScript's own exit transform does for the values it
// handles. TorchScript's front end leaves such uses behind for a `return`
// inside nested `with` blocks scripted without jitamp (fuzz: seed 112702,
// index 124); its interpreter runs them, but every graph copy refuses them
// ("Graph::copy() encountered a use of a value ... not in scope").
#pragma once

#include <memory>

namespace torch::jit {
struct Graph;
} // namespace torch::jit

namespace jitamp {

// Throws (naming the value) where the value would have to leave a loop.
// Idempotent. Returns whether it changed the graph.
bool RepairValueScopes(const std::shared_ptr<torch::jit::Graph>& graph);

} // namespace jitamp
