// Pass (rewrite, after use_scope_ops_as_saved): the exits of scopes that a
// saved model lost come back. Compiling saved code, TorchScript's exit
// transform drops what follows an unconditional raise (in a function with
// an early return elsewhere), so a scope whose block raises before its end
// loads without its jitamp::autocast_exit; its guard (the enter's first
// output) then has no use, and the interpreter drops it as soon as the
// enter has run, whose destructor puts back the state from before the
// scope: the scope's ops up to the raise ran in the caller's state (fuzz
// seed 112903, index 40640: a float32 scope that disables autocast,
// saved in a frozen model). Why: docs/passes.md.
#pragma once

#include <memory>

namespace torch::jit {
struct Graph;
} // namespace torch::jit

namespace jitamp {

// Each jitamp::autocast_enter (.args) whose guard has no use gets an exit at
// the end of its block, where the unsaved graph had it: after the raise,
// never run, it keeps the guard alive until the raise unwinds the frame, as
// eager's __exit__ puts the state back when the exception leaves the `with`.
// Enters of one block close innermost first. Idempotent. Returns whether it
// changed the graph.
bool RestoreExitsCutByRaises(const std::shared_ptr<torch::jit::Graph>& graph);

} // namespace jitamp
