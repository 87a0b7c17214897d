// The guard of an autocast scope: made by jitamp::autocast_enter, closed by
// jitamp::autocast_exit (scope_ops.cpp), registered as a TorchScript class
// in library.cpp.
#pragma once

#include "ops/cast_ops.h"

#include <ATen/autocast_mode.h>
#include <torch/custom_class.h>

#include <algorithm>
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

struct AutocastGuard : torch::CustomClassHolder {
  c10::DeviceType device_type = c10::DeviceType::CPU;
  bool prev_enabled = false;
  at::ScalarType prev_dtype = at::kBFloat16;
  bool prev_cache_enabled = true;
  // The scope's own state, which a forked task's wait may move to another
  // thread (TaskAutocastGuard).
  bool enabled = false;
  at::ScalarType dtype = at::kBFloat16;
  bool cache_enabled = true;
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

  // Takes the scope's state off this thread (TaskAutocastGuard::lend).
  void lend() {
    at::autocast::decrement_nesting();
    at::autocast::set_autocast_enabled(device_type, prev_enabled);
    at::autocast::set_autocast_dtype(device_type, prev_dtype);
    at::autocast::set_autocast_cache_enabled(prev_cache_enabled);
    owner = std::thread::id();
  }

  // Puts it on this thread, where its task's state is (adopt).
  void adopt() {
    at::autocast::set_autocast_enabled(device_type, enabled);
    at::autocast::set_autocast_dtype(device_type, dtype);
    at::autocast::increment_nesting();
    at::autocast::set_autocast_cache_enabled(cache_enabled);
    owner = std::this_thread::get_id();
  }

  // An exception left the scope. Closes only on the thread that entered:
  // the guard may be dropped on another (see docs/runtime-model.md,
  // 'Guards and forked tasks'), whose state must not be touched.
  // (release_resources: the last reference went while a task still names
  // it.)
  void release_resources() override {
    closeOnOwner();
  }
  ~AutocastGuard() override {
    closeOnOwner();
  }

 private:
  void closeOnOwner() {
    if (std::this_thread::get_id() == owner) {
      close();
    }
  }
};

// The caller's autocast state as a forked task adopts it: made by
// jitamp::autocast_task_enter, closed by jitamp::autocast_task_exit
// (task_ops.cpp, carry_autocast_into_tasks.h). Not all of it is state that
// TorchScript carries when a task resumes on another thread after a wait
// (the dtypes on torch 2.4, the cache flag and the scope depth never are;
// nor jitamp's own), so a wait that lets the task's thread go moves the
// task's state, and its open scopes', with the task: lend() takes them off
// the thread before the wait, adopt() puts them on the thread the task
// resumes on (jitamp::wait_prepare, wait_resume).
struct TaskAutocastGuard : torch::CustomClassHolder {
  // What to restore: the state of the thread the task runs on, before it.
  std::vector<at::ScalarType> prev_dtypes;
  bool prev_cache_enabled = true;
  bool prev_region_is_jitamps = false;
  // The task's regionIsJitamps() while lent.
  bool region_is_jitamps = regionIsJitamps();
  // The thread the task's state is on; none while lent to a wait.
  std::thread::id owner;
  // The interpreter stack of the task's run on that thread. A wait on
  // another is in a run nested in the task's (a scripted function called
  // from Python code the task calls), which must keep the thread.
  const void* run_stack = nullptr;
  // The jitamp scopes opened in the task, outermost first; those closed
  // since are dropped at the next open or wait (forgetClosedScopes).
  std::vector<c10::weak_intrusive_ptr<AutocastGuard>> scopes;
  c10::intrusive_ptr<TaskTicket> ticket; // held while the task runs

  explicit TaskAutocastGuard(c10::intrusive_ptr<TaskTicket> caller)
      : ticket(std::move(caller)) {}

  // Puts the task's state on this thread, whose interpreter runs the task
  // on `stack`.
  void adopt(const void* stack) {
    prev_dtypes = autocastDtypes();
    prev_cache_enabled = at::autocast::is_autocast_cache_enabled();
    prev_region_is_jitamps = regionIsJitamps();
    setAutocastDtypes(ticket->dtypes);
    at::autocast::set_autocast_cache_enabled(ticket->cache_enabled);
    // One nesting level for the caller's open scopes: in eager they are
    // open while the task runs, so no scope exit in the task clears the
    // cast cache (one for the whole process); the caller's outermost exit
    // does.
    if (ticket->in_scope) {
      at::autocast::increment_nesting();
    }
    regionIsJitamps() = region_is_jitamps;
    for (const auto& scope : scopes) {
      if (auto open = scope.lock()) {
        open->adopt();
      }
    }
    owner = std::this_thread::get_id();
    run_stack = stack;
    current() = c10::weak_intrusive_ptr<TaskAutocastGuard>(
        c10::intrusive_ptr<TaskAutocastGuard>::reclaim_copy(this));
  }

  // Whether a wait on `stack` may let this thread go: it is in the task's
  // own run, and every scope open in the task is on this thread.
  bool mayLendThread(const void* stack) {
    if (!ticket || owner != std::this_thread::get_id() ||
        stack != run_stack) {
      return false;
    }
    forgetClosedScopes();
    for (const auto& scope : scopes) {
      if (scope.lock()->owner != owner) {
        return false;
      }
    }
    return true;
  }

  // Takes the task's state off this thread, as it was before the task.
  void lend() {
    for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
      if (auto open = it->lock()) {
        open->lend();
      }
    }
    region_is_jitamps = regionIsJitamps();
    regionIsJitamps() = prev_region_is_jitamps;
    if (ticket->in_scope) {
      at::autocast::decrement_nesting();
    }
    setAutocastDtypes(prev_dtypes);
    at::autocast::set_autocast_cache_enabled(prev_cache_enabled);
    owner = std::thread::id();
    if (current()._unsafe_get_target() == this) {
      current() = c10::weak_intrusive_ptr<TaskAutocastGuard>(
          c10::intrusive_ptr<TaskAutocastGuard>());
    }
  }

  void close() {
    scopes.clear(); // none open at the task's end; after an exception, gone
    if (ticket && owner == std::this_thread::get_id()) {
      lend();
    }
    ticket.reset();
  }

  // A scope opened on this thread: in the task whose state is here, if any.
  static void noteScopeOpened(const c10::intrusive_ptr<AutocastGuard>& scope) {
    auto task = current().lock();
    if (task) {
      task->forgetClosedScopes();
      task->scopes.emplace_back(scope);
    }
  }

  void forgetClosedScopes() {
    scopes.erase(
        std::remove_if(
            scopes.begin(),
            scopes.end(),
            [](const c10::weak_intrusive_ptr<AutocastGuard>& scope) {
              const auto open = scope.lock();
              return !open || !open->open;
            }),
        scopes.end());
  }

  // Dropped by an exception on another thread (see AutocastGuard), or
  // while lent: that thread's state stays; the ticket goes all the same.
  // (release_resources: the last reference went while the thread's
  // current() still names the guard.)
  void release_resources() override {
    close();
  }
  ~TaskAutocastGuard() override {
    close();
  }

  // The guard of the task whose state is on this thread, if any.
  static c10::weak_intrusive_ptr<TaskAutocastGuard>& current() {
    thread_local c10::weak_intrusive_ptr<TaskAutocastGuard> guard{
        c10::intrusive_ptr<TaskAutocastGuard>()};
    return guard;
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
