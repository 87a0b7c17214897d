// Kernels of the scope ops (scope_ops.cpp), registered in library.cpp.
#pragma once

#include "autocast_guard.h"

#include <ATen/core/ivalue.h>

#include <optional>
#include <string>
#include <tuple>

namespace jitamp {

std::tuple<c10::intrusive_ptr<AutocastGuard>, int64_t> autocastEnter(
    const c10::IValue& autocast);
std::tuple<c10::intrusive_ptr<AutocastGuard>, int64_t> autocastEnterArgs(
    const std::string& device_type,
    at::ScalarType dtype,
    bool enabled,
    std::optional<bool> cache_enabled);
void autocastExit(const c10::intrusive_ptr<AutocastGuard>& guard);
int64_t autocastCallerRegion();
bool autocastCacheEnabled(std::optional<bool> cache_enabled);

} // namespace jitamp
