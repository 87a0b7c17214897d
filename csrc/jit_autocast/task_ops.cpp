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

namespace {

// The state as one int: the CPU and CUDA autocast dtypes (8 bits each), the
// cache flag, and whether a scope is open (nesting depth > 0).
constexpr int kCudaShift = 8;
constexpr int64_t kDtypeMask = 0xff;
constexpr int64_t kCacheBit = int64_t{1} << 16;
constexpr int64_t kNestedBit = int64_t{1} << 17;

bool scopeOpen() {
  const int depth = at::autocast::increment_nesting() - 1;
  at::autocast::decrement_nesting();
  return depth > 0;
}

} // namespace

c10::intrusive_ptr<TaskTicket> autocastTaskState() {
  const auto cpu = static_cast<int64_t>(
      at::autocast::get_autocast_dtype(c10::DeviceType::CPU));
  const auto cuda = static_cast<int64_t>(
      at::autocast::get_autocast_dtype(c10::DeviceType::CUDA));
  const bool in_scope = scopeOpen();
  // Made inside an open scope, the ticket counts the task forked next as
  // pending (see pendingTasks()) until it is gone.
  return c10::make_intrusive<TaskTicket>(
      cpu | (cuda << kCudaShift) |
          (at::autocast::is_autocast_cache_enabled() ? kCacheBit : 0) |
          (in_scope ? kNestedBit : 0),
      in_scope);
}

c10::intrusive_ptr<TaskAutocastGuard> autocastTaskEnter(
    const c10::intrusive_ptr<TaskTicket>& ticket) {
  const int64_t state = ticket->state;
  auto guard = c10::make_intrusive<TaskAutocastGuard>();
  guard->ticket = ticket;
  guard->prev_cpu_dtype = at::autocast::get_autocast_dtype(c10::DeviceType::CPU);
  guard->prev_cuda_dtype =
      at::autocast::get_autocast_dtype(c10::DeviceType::CUDA);
  guard->prev_cache_enabled = at::autocast::is_autocast_cache_enabled();
  at::autocast::set_autocast_dtype(
      c10::DeviceType::CPU, static_cast<at::ScalarType>(state & kDtypeMask));
  at::autocast::set_autocast_dtype(
      c10::DeviceType::CUDA,
      static_cast<at::ScalarType>((state >> kCudaShift) & kDtypeMask));
  at::autocast::set_autocast_cache_enabled((state & kCacheBit) != 0);
  if ((state & kNestedBit) != 0) {
    at::autocast::increment_nesting();
    guard->nested = true;
  }
  guard->open = true;
  return guard;
}

void autocastTaskExit(const c10::intrusive_ptr<TaskAutocastGuard>& guard) {
  guard->close();
}

} // namespace jitamp
