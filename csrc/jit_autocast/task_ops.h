// Kernels of the task ops (task_ops.cpp), registered in library.cpp.
#pragma once

#include <ATen/core/ivalue.h>

namespace jitamp {

c10::IValue waitOnThisThread(const c10::IValue& future);

} // namespace jitamp
