// Pass: a forked task runs under the autocast state it was forked in.
#pragma once

#include <memory>

namespace torch::jit {
struct Graph;
} // namespace torch::jit

namespace jitamp {

// For each prim::fork whose task does not carry the state yet, adds
//   %ticket = jitamp::autocast_task_state()          -- before the fork
//   jitamp::autocast_task_started(%ticket)            -- after the fork
//   %guard = jitamp::autocast_task_enter(%ticket)     -- first in the task
//   jitamp::autocast_task_exit(%guard)                -- last in the task
// (task_ops.cpp) with %ticket passed to the task as one more input, so that
// the task runs under the caller's autocast state. prim::awaitable is left
// alone. Idempotent. Returns whether it changed the graph. Does not enter
// fork subgraphs (see RewriteAutocast).
// Why: docs/passes.md, 'Why, pass by pass'.
bool CarryAutocastIntoTasks(const std::shared_ptr<torch::jit::Graph>& graph);

} // namespace jitamp
