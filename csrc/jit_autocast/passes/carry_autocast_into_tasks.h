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
// the task runs under the caller's autocast state (dtypes, cache flag and
// scope depth, on every torch) and shares the caller's cast cache (the
// ticket keeps the caller's outermost exit from clearing it while the task
// runs: TaskTicket, ops/autocast_guard.h). Between the first two, the
// task's plan is made with TorchScript's graph optimizations off
// (autocast_task_state turns the thread-local graph-executor optimization
// flag off, autocast_task_started restores it). prim::awaitable is left
// alone. Idempotent. Returns whether it changed the graph. Does not enter
// fork subgraphs (see RewriteAutocast).
// Why: docs/passes.md, 'CarryAutocastIntoTasks'.
bool CarryAutocastIntoTasks(const std::shared_ptr<torch::jit::Graph>& graph);

} // namespace jitamp
