// Pass: `with torch.autocast(...)` scopes to ops that drive eager's state.
#pragma once

#include <memory>

namespace torch::jit {
struct Graph;
} // namespace torch::jit

namespace jitamp {

// Lowers each prim::Enter / prim::Exit on an autocast object to
//   %guard, %region = jitamp::autocast_enter(%autocast)
//   jitamp::autocast_exit(%guard)
// (scope_ops.cpp), which change eager's thread-local autocast state as
// autocast.__enter__ / __exit__ do. `with autocast(...) as ac` names the
// object itself. Throws, pointing at the source, on an exit without its
// enter. Idempotent. Returns whether it changed the graph. Does not enter
// fork subgraphs (see RewriteAutocast).
bool LowerAutocastScopes(const std::shared_ptr<torch::jit::Graph>& graph);

} // namespace jitamp
