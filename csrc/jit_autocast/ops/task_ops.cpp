// Task ops.
//   %lent = jitamp::wait_prepare(%future)  -- just before each aten::wait
//   jitamp::wait_resume(%lent)             -- just after it
//                                  (KeepAutocastStateAcrossWaits)
//   %ticket = jitamp::autocast_task_state()       -- just before the fork
//   jitamp::autocast_task_started(%ticket)         -- just after it
//   %guard = jitamp::autocast_task_enter(%ticket)  -- first in the task
//   jitamp::autocast_task_exit(%guard)             -- last in the task
// The last four hand a forked task the caller's autocast state
// (CarryAutocastIntoTasks, carry_autocast_into_tasks.h).
#include "ops/task_ops.h"

#include <ATen/Parallel.h>
#include <torch/csrc/jit/python/update_graph_executor_opt.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>

namespace jitamp {

namespace {

// Whether a jitamp task was forked in this process (WaitForTaskThreads).
std::atomic<bool>& tasksForked() {
  static std::atomic<bool> forked{false};
  return forked;
}

} // namespace

// Before a torch.jit.wait. TorchScript's wait suspends the interpreter when
// the future is not ready, and the rest of the graph then runs on another
// thread. An autocast scope open at that point would be closed on that
// thread, leaving the caller's autocast state changed after the call; and a
// synchronous call's thread would keep the state its graph had set when it
// suspended. Eager's torch.jit.wait blocks. So the wait blocks here
// (TorchScript's then finds the future done), except in a forked task's own
// run outside every scope opened in the task: there blocking could hold
// every inter-op thread while the tasks waited for are queued behind them
// (nested forks), and the task lends its state (TaskAutocastGuard::lend) to
// the wait, which lets the thread go; wait_resume puts the state on the
// thread the task goes on on. Boxed, to know the interpreter stack it runs
// on.
void waitPrepare(const c10::OperatorHandle& /*op*/, torch::jit::Stack* stack) {
  auto fut = torch::jit::pop(*stack).toFuture();
  c10::intrusive_ptr<TaskAutocastGuard> lent;
  if (!fut->completed()) {
    auto task = TaskAutocastGuard::current().lock();
    if (task && task->mayLendThread(stack)) {
      task->lend();
      lent = std::move(task);
    } else {
      fut->wait();
    }
  }
  if (lent) {
    torch::jit::push(*stack, c10::IValue(std::move(lent)));
  } else {
    torch::jit::push(*stack, c10::IValue());
  }
}

void waitResume(const c10::OperatorHandle& /*op*/, torch::jit::Stack* stack) {
  const c10::IValue lent = torch::jit::pop(*stack);
  if (!lent.isNone()) {
    lent.toCustomClass<TaskAutocastGuard>()->adopt(stack);
  }
}

// The blocking wait of files saved by jitamp before wait_prepare.
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
  tasksForked().store(true, std::memory_order_relaxed);
  auto ticket = c10::make_intrusive<TaskTicket>();
  ticket->executor_optimize = torch::jit::getGraphExecutorOptimize();
  torch::jit::setGraphExecutorOptimize(false);
  return ticket;
}

void autocastTaskStarted(const c10::intrusive_ptr<TaskTicket>& ticket) {
  torch::jit::setGraphExecutorOptimize(ticket->executor_optimize);
}

// Boxed: the guard notes the interpreter stack of the task's run.
void autocastTaskEnter(const c10::OperatorHandle& /*op*/, torch::jit::Stack* stack) {
  auto guard = c10::make_intrusive<TaskAutocastGuard>(
      torch::jit::pop(*stack).toCustomClass<TaskTicket>());
  guard->adopt(stack);
  torch::jit::push(*stack, c10::IValue(std::move(guard)));
}

void autocastTaskExit(const c10::intrusive_ptr<TaskAutocastGuard>& guard) {
  guard->close();
}

// One barrier task per inter-op thread: each waits until all have started,
// so each holds a thread of its own, and a thread starts one only after it
// has destroyed the task before it (c10::ThreadPool::main_loop). A thread
// that stays busy past the timeout leaves the barrier tasks to give up on
// their own; they share their state, so none outlives it.
bool WaitForTaskThreads(int64_t timeout_ms) {
  if (!tasksForked().load(std::memory_order_relaxed)) {
    return true;
  }
  struct Barrier {
    std::mutex mutex;
    std::condition_variable arrived_cv;
    int arrived = 0;
    int threads = at::get_num_interop_threads();
  };
  auto barrier = std::make_shared<Barrier>();
  const auto timeout = std::chrono::milliseconds(timeout_ms);
  for (int i = 0; i < barrier->threads; ++i) {
    at::launch([barrier, timeout] {
      std::unique_lock<std::mutex> lock(barrier->mutex);
      ++barrier->arrived;
      barrier->arrived_cv.notify_all();
      barrier->arrived_cv.wait_for(
          lock, timeout, [&] { return barrier->arrived >= barrier->threads; });
    });
  }
  std::unique_lock<std::mutex> lock(barrier->mutex);
  return barrier->arrived_cv.wait_for(
      lock, timeout, [&] { return barrier->arrived >= barrier->threads; });
}

} // namespace jitamp
