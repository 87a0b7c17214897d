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

} // namespace jitamp
