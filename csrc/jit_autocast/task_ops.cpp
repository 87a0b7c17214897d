// Task ops.
//   %v = jitamp::wait(%future)  -- torch.jit.wait that blocks; put in place
//                                  of aten::wait by MakeWaitsBlocking
//   %ticket = jitamp::autocast_task_state()       -- in the forking graph
//   %guard = jitamp::autocast_task_enter(%ticket)  -- first in the task
//   jitamp::autocast_task_exit(%guard)             -- last in the task
// The last three hand a forked task the caller's autocast state
// (CarryAutocastIntoTasks, carry_autocast_into_tasks.h).
#include "task_ops.h"

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
c10::intrusive_ptr<TaskTicket> autocastTaskState() {
  return c10::make_intrusive<TaskTicket>();
}

c10::intrusive_ptr<TaskAutocastGuard> autocastTaskEnter(
    const c10::intrusive_ptr<TaskTicket>& ticket) {
  return c10::make_intrusive<TaskAutocastGuard>(ticket);
}

void autocastTaskExit(const c10::intrusive_ptr<TaskAutocastGuard>& guard) {
  guard->close();
}

} // namespace jitamp
