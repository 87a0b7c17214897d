// Pass: a forked task runs under the autocast state it was forked in.
#pragma once

#include <memory>

namespace torch::jit {
struct Graph;
} // namespace torch::jit

namespace jitamp {

// Eager's torch.jit.fork runs its function at once, on the calling thread,
// under the caller's whole autocast state. TorchScript's prim::fork runs the
// task on an inter-op worker and hands it part of that state
// (at::ThreadLocalState: the enabled flags as dispatch keys, and from torch
// 2.5 on the autocast dtypes, but never the cache flag or the nesting
// depth). For each prim::fork this pass adds
//   %ticket = jitamp::autocast_task_state()          -- before the fork
//   jitamp::autocast_task_started(%ticket)            -- after the fork
//   %guard = jitamp::autocast_task_enter(%ticket)     -- first in the task
//   jitamp::autocast_task_exit(%guard)                -- last in the task
// (task_ops.cpp) with %ticket passed to the task as one more input, so the
// task sees the caller's dtypes, cache flag and scope depth on every torch,
// and shares the caller's cast cache as eager's inline fork does (the
// ticket keeps the caller's outermost exit from clearing it while the task
// runs: TaskTicket, autocast_guard.h). Between the first two the task's
// plan is made without TorchScript's graph optimizations, as the simple
// executor makes the plans of the functions jitamp rewrites (task_ops.cpp).
// prim::awaitable is left alone: eager and TorchScript both run it at its
// wait, on the waiting thread. Idempotent. Returns whether it changed the
// graph. Does not enter fork subgraphs (see RewriteAutocast).
bool CarryAutocastIntoTasks(const std::shared_ptr<torch::jit::Graph>& graph);

} // namespace jitamp
