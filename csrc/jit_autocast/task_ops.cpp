// Task ops: %v = jitamp::wait(%future), torch.jit.wait that blocks. Put in
// place of aten::wait by MakeWaitsBlocking (make_waits_blocking.h).
#include "task_ops.h"

namespace jitamp {

// torch.jit.wait that blocks the calling thread. TorchScript's own
// aten::wait suspends the interpreter when the future is not ready, and the
// rest of the graph then runs on another thread: an autocast scope open at
// that point would be closed on that thread, leaving the caller's autocast
// state changed after the call. Eager's torch.jit.wait blocks, too.
c10::IValue waitOnThisThread(const c10::IValue& future) {
  auto fut = future.toFuture();
  fut->waitAndThrow();
  return fut->value();
}

} // namespace jitamp
