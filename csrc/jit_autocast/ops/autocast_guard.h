// The guard of an autocast scope: made by jitamp::autocast_enter, closed by
// jitamp::autocast_exit (scope_ops.cpp), registered as a TorchScript class
// in library.cpp.
#pragma once

#include "ops/cast_ops.h"

#include <ATen/autocast_mode.h>
#include <torch/custom_class.h>

#include <atomic>
#include <thread>
#include <vector>

namespace jitamp {

// The attribute the pass adds to the autocast classes: eager's __init__
// resolves cache_enabled=None when the object is built, the scripted
// __init__ drops it; jitamp::autocast_enter reads it.
constexpr const char* kCacheAttr = "_jitamp_cache_enabled";

// Tasks forked inside an open scope that have not ended yet (counted by
// TaskTicket). While one is pending, an outermost scope exit leaves eager's
// cast cache for a later outermost exit to clear. Why:
// docs/runtime-model.md, 'Guards and forked tasks'.
inline std::atomic<int>& pendingTasks() {
  static std::atomic<int> count{0};
  return count;
}

// What an outermost scope exit does to eager's cast cache (see above).
inline void clearCacheUnlessTasksPending() {
  if (pendingTasks().load() == 0) {
    at::autocast::clear_cache();
    ForgetUncachedCasts();
  }
}

// The device types that have autocast state on this torch, in the order of
// c10::DeviceType (CPU first, CUDA second).
inline const std::vector<c10::DeviceType>& autocastDeviceTypes() {
  static const std::vector<c10::DeviceType> types = [] {
    std::vector<c10::DeviceType> found;
    for (int i = 0;
         i < static_cast<int>(c10::DeviceType::COMPILE_TIME_MAX_DEVICE_TYPES);
         ++i) {
      const auto type = static_cast<c10::DeviceType>(i);
      if (at::autocast::is_autocast_available(type)) {
        found.push_back(type);
      }
    }
    return found;
  }();
  return types;
}

// The thread's autocast dtype of each of autocastDeviceTypes().
inline std::vector<at::ScalarType> autocastDtypes() {
  std::vector<at::ScalarType> dtypes;
  for (const c10::DeviceType type : autocastDeviceTypes()) {
    dtypes.push_back(at::autocast::get_autocast_dtype(type));
  }
  return dtypes;
}

inline void setAutocastDtypes(const std::vector<at::ScalarType>& dtypes) {
  const auto& types = autocastDeviceTypes();
  for (size_t i = 0; i < types.size(); ++i) {
    at::autocast::set_autocast_dtype(types[i], dtypes[i]);
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
    const int depth = at::autocast::decrement_nesting();
    if (depth == 0) {
      clearCacheUnlessTasksPending();
    }
    at::autocast::set_autocast_enabled(device_type, prev_enabled);
    at::autocast::set_autocast_dtype(device_type, prev_dtype);
    at::autocast::set_autocast_cache_enabled(prev_cache_enabled);
    NoteScopeExited(device_type, prev_enabled, prev_dtype, depth);
  }

  // An exception left the scope. Closes only on the thread that entered:
  // the guard may be dropped on another (see docs/runtime-model.md,
  // 'Guards and forked tasks'), whose state must not be touched.
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
  // The calling thread's state when the ticket is made (the enabled flags
  // travel with the thread-local dispatch keys TorchScript's fork carries).
  std::vector<at::ScalarType> dtypes = autocastDtypes();
  bool cache_enabled = at::autocast::is_autocast_cache_enabled();
  bool in_scope = scopeOpen();
  // The calling thread's graph executor optimization flag, which
  // jitamp::autocast_task_state turns off for the fork and
  // jitamp::autocast_task_started restores (task_ops.cpp).
  bool executor_optimize = true;

  TaskTicket() {
    if (in_scope) {
      pendingTasks().fetch_add(1);
    }
  }
  ~TaskTicket() override {
    if (in_scope) {
      pendingTasks().fetch_sub(1);
    }
  }

 private:
  // Whether a scope is open on this thread (there is no getter for the
  // nesting depth).
  static bool scopeOpen() {
    const int depth = at::autocast::increment_nesting() - 1;
    at::autocast::decrement_nesting();
    return depth > 0;
  }
};

// The caller's autocast state as a forked task adopts it: made by
// jitamp::autocast_task_enter, closed by jitamp::autocast_task_exit
// (task_ops.cpp, carry_autocast_into_tasks.h).
struct TaskAutocastGuard : torch::CustomClassHolder {
  // What to restore: this thread's state before the task.
  std::vector<at::ScalarType> prev_dtypes = autocastDtypes();
  bool prev_cache_enabled = at::autocast::is_autocast_cache_enabled();
  std::thread::id owner = std::this_thread::get_id();
  c10::intrusive_ptr<TaskTicket> ticket; // held while the task runs

  explicit TaskAutocastGuard(c10::intrusive_ptr<TaskTicket> caller)
      : ticket(std::move(caller)) {
    setAutocastDtypes(ticket->dtypes);
    at::autocast::set_autocast_cache_enabled(ticket->cache_enabled);
    // One nesting level for the caller's open scopes: in eager they are
    // open while the task runs, so no scope exit in the task clears the
    // cast cache (one for the whole process); the caller's outermost exit
    // does.
    if (ticket->in_scope) {
      at::autocast::increment_nesting();
    }
  }

  void close() {
    if (!ticket) {
      return;
    }
    if (ticket->in_scope) {
      at::autocast::decrement_nesting();
    }
    setAutocastDtypes(prev_dtypes);
    at::autocast::set_autocast_cache_enabled(prev_cache_enabled);
    ticket.reset();
  }

  // Dropped by an exception on another thread (see AutocastGuard): that
  // thread's state stays; the ticket goes all the same.
  ~TaskAutocastGuard() override {
    if (std::this_thread::get_id() == owner) {
      close();
    }
  }
};

// The thread's CPU and CUDA autocast flags, switched off for a call of a
// profiling executor's fallback function (suspend_autocast_around_fallbacks.h;
// the built-in JIT autocast pass it keeps out reads only those two): made by
// jitamp::suspend_autocast before the call, handed to the fallback, whose
// first node, jitamp::resume_autocast, puts them back. If the call fails
// before the body starts, dropping the object puts them back.
struct SuspendedAutocast : torch::CustomClassHolder {
  bool cpu_enabled = at::autocast::is_autocast_enabled(c10::DeviceType::CPU);
  bool cuda_enabled = at::autocast::is_autocast_enabled(c10::DeviceType::CUDA);
  bool suspended = false;
  std::thread::id owner = std::this_thread::get_id();

  SuspendedAutocast() {
    if (cpu_enabled || cuda_enabled) {
      at::autocast::set_autocast_enabled(c10::DeviceType::CPU, false);
      at::autocast::set_autocast_enabled(c10::DeviceType::CUDA, false);
      suspended = true;
    }
  }

  void resume() {
    if (!suspended) {
      return;
    }
    suspended = false;
    at::autocast::set_autocast_enabled(c10::DeviceType::CPU, cpu_enabled);
    at::autocast::set_autocast_enabled(c10::DeviceType::CUDA, cuda_enabled);
  }

  ~SuspendedAutocast() override {
    if (std::this_thread::get_id() == owner) {
      resume();
    }
  }
};

} // namespace jitamp
