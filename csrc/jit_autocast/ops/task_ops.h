// Kernels of the task ops (task_ops.cpp), registered in library.cpp.
#pragma once

#include "ops/autocast_guard.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/ivalue.h>
#include <ATen/core/stack.h>

namespace jitamp {

void waitPrepare(const c10::OperatorHandle& op, torch::jit::Stack* stack);
void waitResume(const c10::OperatorHandle& op, torch::jit::Stack* stack);
void waitOnThisThread(const c10::OperatorHandle& op, torch::jit::Stack* stack);
c10::intrusive_ptr<TaskTicket> autocastTaskState();
void autocastTaskStarted(const c10::intrusive_ptr<TaskTicket>& ticket);
void autocastTaskEnter(const c10::OperatorHandle& op, torch::jit::Stack* stack);
void autocastTaskExit(const c10::intrusive_ptr<TaskAutocastGuard>& guard);

// Waits, at most `timeout_ms`, until every inter-op thread has finished
// what it was running, the release of a finished task's interpreter state
// included; at once where no jitamp task was forked. Python calls it at
// exit (jitamp/_library.py): jitamp's wait blocks the caller only until the
// task's future is done, and the task's thread lets the task's state go
// after that; when that drops the last reference to a tensor Python has
// seen, it needs the GIL, and a thread that takes the GIL while Python
// finalizes is ended by pthread_exit, whose unwinding through a noexcept
// destructor aborts the process ("terminate called without an active
// exception"). Plain TorchScript does not block: its caller's graph goes
// on, on the task's thread, after the task. Returns whether the threads
// finished in time.
bool WaitForTaskThreads(int64_t timeout_ms);

} // namespace jitamp
