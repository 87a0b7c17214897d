#include "ops/static_casts.h"

#include "ops/cast_ops.h"

#include <ATen/autocast_mode.h>
#include <ATen/ops/empty.h>

namespace jitamp {

StateForCast::StateForCast(const DeviceStates& states)
    : cache_was_enabled_(at::autocast::is_autocast_cache_enabled()) {
  for (const auto& [device_type, state] : states) {
    previous_[device_type] = {
        at::autocast::is_autocast_enabled(device_type),
        at::autocast::get_autocast_dtype(device_type)};
    at::autocast::set_autocast_enabled(device_type, state.enabled);
    if (state.enabled) {
      at::autocast::set_autocast_dtype(device_type, state.dtype);
    }
  }
  at::autocast::set_autocast_cache_enabled(false);
}

StateForCast::~StateForCast() {
  for (const auto& [device_type, state] : previous_) {
    at::autocast::set_autocast_enabled(device_type, state.enabled);
    at::autocast::set_autocast_dtype(device_type, state.dtype);
  }
  at::autocast::set_autocast_cache_enabled(cache_was_enabled_);
}

bool leftToTheOp(const at::Tensor& tensor) {
  if (!tensor.defined()) {
    return false;
  }
  const c10::DeviceType device_type = tensor.device().type();
  return (device_type == c10::DeviceType::CPU ||
          device_type == c10::DeviceType::CUDA) &&
      !carriesAutocastKey(tensor, device_type);
}

std::optional<DeviceStates> staticStatesOf(
    const std::vector<at::Tensor>& tensors,
    const StaticScopes& scopes,
    const std::string& devices) {
  DeviceStates states;
  for (const auto& tensor : tensors) {
    if (!tensor.defined() || !namesDevice(devices, tensor.device().type())) {
      continue;
    }
    const auto device_type = tensor.device().type();
    const auto state = scopes.stateOf(device_type);
    if (!state) {
      return std::nullopt;
    }
    states[device_type] = *state;
  }
  return states;
}

std::string describe(const DeviceStates& states) {
  std::string out;
  for (const auto& [device_type, state] : states) {
    out += c10::DeviceTypeName(device_type, /*lower_case=*/true) + "=" +
        (state.enabled ? c10::toString(state.dtype) : "off") + ";";
  }
  return out;
}

bool StaticCastIsIdentity(
    bool lower_precision,
    const at::Tensor& tensor,
    const std::string& devices,
    const StaticScopes& scopes) {
  if (!tensor.defined()) {
    return true;
  }
  if (leftToTheOp(tensor)) {
    return false;
  }
  const auto states = staticStatesOf({tensor}, scopes, devices);
  if (!states) {
    return false;
  }
  StateForCast state(*states);
  return castTo(tensor, devices, lower_precision).is_same(tensor);
}

std::optional<at::ScalarType> StaticCastDtype(
    bool lower_precision,
    at::ScalarType dtype,
    c10::Device device,
    const std::string& devices,
    const StaticScopes& scopes) {
  const at::Tensor probe =
      at::empty({0}, at::TensorOptions().dtype(dtype).device(device));
  const auto states = staticStatesOf({probe}, scopes, devices);
  if (!states) {
    return std::nullopt;
  }
  StateForCast state(*states);
  const at::Tensor cast = castTo(probe, devices, lower_precision);
  if (cast.is_same(probe)) {
    return std::nullopt;
  }
  return cast.scalar_type();
}

} // namespace jitamp
