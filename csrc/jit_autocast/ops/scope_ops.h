// Kernels of the scope ops (scope_ops.cpp), registered in library.cpp.
#pragma once

#include "ops/autocast_guard.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/ivalue.h>
#include <ATen/core/stack.h>

#include <functional>
#include <optional>
#include <string>
#include <tuple>

namespace jitamp {

// Eager's autocast.__init__ for a device type other than CPU and CUDA: given
// the device string, dtype and enabled flag, returns whether the scope is
// enabled, warning or raising as eager does. Set by jitamp's Python module
// (_library.py); a C++ host without Python has none, and such a scope gets
// CPU's check (bfloat16 and float16 enable it).
using EagerScopeCheck =
    std::function<bool(const std::string&, at::ScalarType, bool)>;
void SetEagerScopeCheck(EagerScopeCheck check);

std::tuple<c10::intrusive_ptr<AutocastGuard>, int64_t> autocastEnter(
    const c10::IValue& autocast);
std::tuple<c10::intrusive_ptr<AutocastGuard>, int64_t> autocastEnterArgs(
    const std::string& device_type,
    at::ScalarType dtype,
    bool enabled,
    std::optional<bool> cache_enabled);
void autocastExit(const c10::intrusive_ptr<AutocastGuard>& guard);
int64_t autocastCallerRegion();
// The kernel of the three ops above as saved (autocast_enter, .args,
// autocast_caller_region): they run only in a function jitamp has not
// configured, whose executor is TorchScript's (not eager's semantics), and
// raise, saying what configures it (passes/use_scope_ops_of_plans.h).
void raiseOutsidePlan(const c10::OperatorHandle& op, torch::jit::Stack* stack);
bool autocastCacheEnabled(std::optional<bool> cache_enabled);
// Raises what prim::RaiseException(message, cls) raises, as an op: code
// that follows it stays reachable for TorchScript's front end when a saved
// model is compiled again (see LowerAutocastScopes' use of `as` names).
void raiseAsEager(const std::string& message, const std::string& cls);
// Around a call of a profiling executor's fallback function
// (suspend_autocast_around_fallbacks.h): switch the CPU and CUDA flags off before it, and
// back on as the body's first node.
c10::intrusive_ptr<SuspendedAutocast> suspendAutocast();
void resumeAutocast(const c10::intrusive_ptr<SuspendedAutocast>& suspended);
// The TorchScript type of SuspendedAutocast (registered in library.cpp).
c10::TypePtr SuspendedAutocastType();

} // namespace jitamp
