// The guard of an autocast scope: made by jitamp::autocast_enter, closed by
// jitamp::autocast_exit (scope_ops.cpp), registered as a TorchScript class
// in library.cpp.
#pragma once

#include <ATen/autocast_mode.h>
#include <torch/custom_class.h>

#include <atomic>
#include <thread>

namespace jitamp {

// The attribute the pass adds to the autocast classes: eager's __init__
// resolves cache_enabled=None when the object is built, the scripted
// __init__ drops it; jitamp::autocast_enter reads it.
constexpr const char* kCacheAttr = "_jitamp_cache_enabled";

// Tasks forked inside an open scope that have not ended yet. Eager runs a
// forked function to its end before the caller goes on, so everything it
// casts shares eager's cast cache (one for the whole process) with the
// caller's region; a TorchScript task may still run after the caller's
// outermost scope has exited. While one does, that exit leaves the cache
// for a later outermost exit to clear, so the task and the caller still
// share their casts (the same cast node, hence eager's gradients).
inline std::atomic<int>& pendingTasks() {
  static std::atomic<int> count{0};
  return count;
}

// What an outermost scope exit does to eager's cast cache (see above).
inline void clearCacheUnlessTasksPending() {
  if (pendingTasks().load() == 0) {
    at::autocast::clear_cache();
  }
}

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
      clearCacheUnlessTasksPending();
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

// The caller's autocast state, handed to a forked task: made by
// jitamp::autocast_task_state before the fork, passed to the task as an
// input. A ticket made inside an open scope counts in pendingTasks() until
// its last reference goes: when the task has ended (its guard holds it), or
// at once if TorchScript drops the fork (an unused future).
struct TaskTicket : torch::CustomClassHolder {
  int64_t state = 0;
  bool counted = false;

  TaskTicket(int64_t state_, bool in_scope) : state(state_), counted(in_scope) {
    if (counted) {
      pendingTasks().fetch_add(1);
    }
  }
  ~TaskTicket() override {
    if (counted) {
      pendingTasks().fetch_sub(1);
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
  c10::intrusive_ptr<TaskTicket> ticket; // until the task ends

  void release() {
    ticket.reset();
  }

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
    release();
  }

  ~TaskAutocastGuard() override {
    if (std::this_thread::get_id() == owner) {
      close();
    }
    release();
  }
};

} // namespace jitamp
