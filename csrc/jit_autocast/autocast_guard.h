// The guard of an autocast scope: made by jitamp::autocast_enter, closed by
// jitamp::autocast_exit (scope_ops.cpp), registered as a TorchScript class
// in library.cpp.
#pragma once

#include <ATen/autocast_mode.h>
#include <torch/custom_class.h>

#include <thread>

namespace jitamp {

// The attribute the pass adds to the autocast classes: eager's __init__
// resolves cache_enabled=None when the object is built, the scripted
// __init__ drops it; jitamp::autocast_enter reads it.
constexpr const char* kCacheAttr = "_jitamp_cache_enabled";

struct AutocastGuard : torch::CustomClassHolder {
  c10::DeviceType device_type = c10::DeviceType::CPU;
  bool prev_enabled = false;
  at::ScalarType prev_dtype = at::kBFloat16;
  bool prev_cache_enabled = true;
  bool open = false;
  // The state is thread-local: only the thread that entered can restore it.
  std::thread::id owner = std::this_thread::get_id();

  // autocast.__exit__
  void close() {
    if (!open) {
      return;
    }
    open = false;
    if (at::autocast::decrement_nesting() == 0) {
      at::autocast::clear_cache();
    }
    at::autocast::set_autocast_enabled(device_type, prev_enabled);
    at::autocast::set_autocast_dtype(device_type, prev_dtype);
    at::autocast::set_autocast_cache_enabled(prev_cache_enabled);
  }

  // An exception left the scope. The interpreter drops the guard on the
  // thread that releases the graph's registers last, which for a forked task
  // that raised may be the thread that forked it; that thread's state must
  // not be touched. (The task's thread gets its dispatch keys back from
  // TorchScript's ThreadLocalState guard, and the rest from the task's
  // TaskAutocastGuard.)
  ~AutocastGuard() override {
    if (std::this_thread::get_id() == owner) {
      close();
    }
  }
};

// The caller's autocast state as a forked task adopts it: made by
// jitamp::autocast_task_enter, closed by jitamp::autocast_task_exit
// (task_ops.cpp, carry_autocast_into_tasks.h).
struct TaskAutocastGuard : torch::CustomClassHolder {
  at::ScalarType prev_cpu_dtype = at::kBFloat16;
  at::ScalarType prev_cuda_dtype = at::kHalf;
  bool prev_cache_enabled = true;
  bool nested = false; // the task entered one nesting level for its caller
  bool open = false;
  std::thread::id owner = std::this_thread::get_id();

  void close() {
    if (!open) {
      return;
    }
    open = false;
    // The caller's scopes are open in eager while the task runs, so no scope
    // exit in the task clears the cast cache (one for the whole process);
    // the caller's outermost exit does, as in eager.
    if (nested) {
      at::autocast::decrement_nesting();
    }
    at::autocast::set_autocast_dtype(c10::DeviceType::CPU, prev_cpu_dtype);
    at::autocast::set_autocast_dtype(c10::DeviceType::CUDA, prev_cuda_dtype);
    at::autocast::set_autocast_cache_enabled(prev_cache_enabled);
  }

  ~TaskAutocastGuard() override {
    if (std::this_thread::get_id() == owner) {
      close();
    }
  }
};

} // namespace jitamp
