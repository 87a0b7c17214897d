// Task ops.
//   %v = jitamp::wait(%future)  -- torch.jit.wait that blocks; put in place
//                                  of aten::wait by MakeWaitsBlocking
//   %ticket = jitamp::autocast_task_state()       -- just before the fork
//   jitamp::autocast_task_started(%ticket)         -- just after it
//   %guard = jitamp::autocast_task_enter(%ticket)  -- first in the task
//   jitamp::autocast_task_exit(%guard)             -- last in the task
// The last four hand a forked task the caller's autocast state
// (CarryAutocastIntoTasks, carry_autocast_into_tasks.h).
#include "ops/task_ops.h"

#include <torch/csrc/jit/python/update_graph_executor_opt.h>

namespace jitamp {

// torch.jit.wait that blocks the calling thread. TorchScript's own
// aten::wait suspends the interpreter when the future is not ready, and the
// rest of the graph then runs on another thread: an autocast scope open at
// that point would be closed on that thread, leaving the caller's autocast
// state changed after the call. Eager's torch.jit.wait blocks, too.
// Boxed: the schema is generic, `wait(Future(t) future) -> t`, like
// aten::wait's, so that the result keeps its type through a save and load
// (with `-> Any` the serialized code would not compile).
void waitOnThisThread(const c10::OperatorHandle& /*op*/, torch::jit::Stack* stack) {
  auto fut = torch::jit::pop(*stack).toFuture();
  fut->waitAndThrow();
  torch::jit::push(*stack, fut->value());
}

// Made inside an open scope, the ticket counts the task forked next as
// pending (see pendingTasks()) until it is gone.
//
// It also turns graph executor optimization off on the calling thread until
// autocast_task_started. TorchScript's fork runs its subgraph as a function
// of its own, whose executor is TorchScript's default (the profiling
// executor), not the simple executor jitamp gives the functions it rewrites;
// that executor's optimizations change results (DecomposeOps splits a
// bfloat16 addmm into mm and add, rounding twice; symbolic autodiff passes
// gradients without eager's casts). The fork's plan is made on the calling
// thread, and with the (thread-local) flag off it is the unoptimized plan,
// as the simple executor's is.
c10::intrusive_ptr<TaskTicket> autocastTaskState() {
  auto ticket = c10::make_intrusive<TaskTicket>();
  ticket->executor_optimize = torch::jit::getGraphExecutorOptimize();
  torch::jit::setGraphExecutorOptimize(false);
  return ticket;
}

void autocastTaskStarted(const c10::intrusive_ptr<TaskTicket>& ticket) {
  torch::jit::setGraphExecutorOptimize(ticket->executor_optimize);
}

c10::intrusive_ptr<TaskAutocastGuard> autocastTaskEnter(
    const c10::intrusive_ptr<TaskTicket>& ticket) {
  return c10::make_intrusive<TaskAutocastGuard>(ticket);
}

void autocastTaskExit(const c10::intrusive_ptr<TaskAutocastGuard>& guard) {
  guard->close();
}

} // namespace jitamp
