// Casts whose autocast state the IR tells (static_scopes.h), done now by the
// smart casts' own kernels (cast_ops.h): eager's cast, hence eager's bits.
#pragma once

#include "ir/static_scopes.h"

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/DeviceType.h>
#include <c10/core/GradMode.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace jitamp {

// An autocast state per device type.
using DeviceStates = std::map<c10::DeviceType, DeviceAutocast>;

// Sets the thread's autocast state of the device types in `states` for its
// lifetime, with the cast cache and grad mode off (a cast neither cached
// nor recorded), and restores all of it.
class StateForCast {
 public:
  explicit StateForCast(const DeviceStates& states);
  ~StateForCast();
  StateForCast(const StateForCast&) = delete;
  StateForCast& operator=(const StateForCast&) = delete;

 private:
  c10::NoGradGuard no_grad_;
  bool cache_was_enabled_;
  DeviceStates previous_;
};

// Whether the cast of a constant `tensor` depends on the op's other tensors
// (an MKLDNN tensor: carriesAutocastKey, cast_ops.h), so that it stays in
// the graph.
bool leftToTheOp(const at::Tensor& tensor);

// The static state of each device type among `tensors` that `devices`
// names (a cast of a tensor on another device type returns it whatever the
// state), at the point `scopes` describes; nullopt if one is not static.
std::optional<DeviceStates> staticStatesOf(
    const std::vector<at::Tensor>& tensors,
    const StaticScopes& scopes,
    const std::string& devices = "cpu,cuda");

// "cpu=BFloat16;cuda=off;": for logs and for keys of casts done once.
std::string describe(const DeviceStates& states);

// Whether the single-tensor cast `lower_precision` (autocast_to_fp16, else
// autocast_to_fp32) of the constant `tensor`, for the policy's `devices`,
// is known to return `tensor` itself at the point `scopes` describes: its
// device type's state is static and the cast does nothing there.
bool StaticCastIsIdentity(
    bool lower_precision,
    const at::Tensor& tensor,
    const std::string& devices,
    const StaticScopes& scopes);

// The dtype that the single-tensor cast `lower_precision` (as above), for
// the policy's `devices`, gives a tensor of `dtype` on `device` at the
// point `scopes` describes, found by running the kernel under that state
// on an empty tensor: nullopt where the device type's state is not static
// or the cast returns such a tensor itself.
std::optional<at::ScalarType> StaticCastDtype(
    bool lower_precision,
    at::ScalarType dtype,
    c10::Device device,
    const std::string& devices,
    const StaticScopes& scopes);

} // namespace jitamp
