// Kernels of the smart casts (here and in cast_ops.cpp), registered in
// library.cpp.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/DeviceType.h>

#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

namespace jitamp {

// The region token (see library.cpp); the kernels ignore it.
using Region = int64_t;

// Whether the `devices` constant of a smart cast ("cpu", "cuda",
// "cpu,cuda") names `device_type`: a cast of a tensor on a device type it
// does not name returns the tensor, whatever the state.
bool namesDevice(c10::string_view devices, c10::DeviceType device_type);

// Whether `tensor` brings eager's autocast dispatch key for `device_type`
// into an op's key set (MKLDNN tensors do not). A smart cast leaves a
// tensor without it to the op's own autocast kernel, which sees all the
// op's tensors and decides as eager does. Why: docs/runtime-model.md,
// 'Smart casts in the IR'.
bool carriesAutocastKey(const at::Tensor& tensor, c10::DeviceType device_type);

// Forgets the weights that no-grad casts copied without eager's cache (see
// eagerCast in cast_ops.cpp): called where an outermost scope exit clears
// eager's cache.
void ForgetUncachedCasts();

// What a scope enter (at nesting `depth`, from the state `was_*` to
// `enabled`, `dtype`) and exit (back to `enabled`, `dtype`, at `depth`) did
// to `device_type`'s autocast: no-grad casts copy weights without eager's
// cache only in a region whose outermost scope is jitamp's and that has met
// one lower precision (eagerCast in cast_ops.cpp).
// Whether this thread's outermost autocast scope is jitamp's (its scope
// ops set it): a forked task's state carries it to the thread it resumes on
// (TaskAutocastGuard, autocast_guard.h).
bool& regionIsJitamps();
void NoteScopeEntered(
    c10::DeviceType device_type,
    bool was_enabled,
    at::ScalarType was_dtype,
    bool enabled,
    at::ScalarType dtype,
    int depth);
void NoteScopeExited(
    c10::DeviceType device_type,
    bool enabled,
    at::ScalarType dtype,
    int depth);

// The smart cast of `self`: jitamp::autocast_to_fp16's where
// `lower_precision`, else autocast_to_fp32's.
at::Tensor castTo(
    const at::Tensor& self,
    c10::string_view devices,
    bool lower_precision);

// The kernels of autocast_to_fp16 (kLower) and autocast_to_fp32, one per
// overload, and of fusible_to_fp16 / fusible_to_fp32
// (expose_static_casts_to_fuser.h; `dtype` is for the TensorExpr fuser's
// lowering only).
template <bool kLower>
at::Tensor smartCast(const at::Tensor& self, c10::string_view devices, Region) {
  return castTo(self, devices, kLower);
}
template <bool kLower>
std::optional<at::Tensor> smartCastOptional(
    const std::optional<at::Tensor>& self,
    c10::string_view devices,
    Region) {
  if (!self.has_value()) {
    return self;
  }
  return castTo(*self, devices, kLower);
}
template <bool kLower>
std::vector<at::Tensor> smartCastList(
    at::TensorList tensors,
    c10::string_view devices,
    Region) {
  std::vector<at::Tensor> out;
  out.reserve(tensors.size());
  for (const at::Tensor& tensor : tensors) {
    out.push_back(castTo(tensor, devices, kLower));
  }
  return out;
}
template <bool kLower>
at::Tensor fusibleCast(
    const at::Tensor& self,
    c10::string_view devices,
    at::ScalarType /*dtype*/,
    Region) {
  return castTo(self, devices, kLower);
}

// jitamp::autocast_to_fp16_before_loop: the cast of `self` that every
// iteration of a loop would make, made once before the loop (cast_ops.cpp).
at::Tensor toFp16BeforeLoop(
    const at::Tensor& self,
    c10::string_view devices,
    int64_t max_trip_count,
    bool initial_condition,
    Region region);

at::Tensor toFp32IfNoDtype(
    const at::Tensor& self,
    c10::string_view devices,
    std::optional<at::ScalarType> dtype,
    Region region);

std::tuple<at::Tensor, at::Tensor> promote2(
    const at::Tensor& a,
    const at::Tensor& b,
    c10::string_view devices,
    Region region);
std::tuple<at::Tensor, at::Tensor, at::Tensor> promote3(
    const at::Tensor& a,
    const at::Tensor& b,
    const at::Tensor& c,
    c10::string_view devices,
    Region region);
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> promote4(
    const at::Tensor& a,
    const at::Tensor& b,
    const at::Tensor& c,
    const at::Tensor& d,
    c10::string_view devices,
    Region region);
std::vector<at::Tensor> promoteList(
    at::TensorList tensors,
    c10::string_view devices,
    Region region);

// jitamp::autocast_dependent (fold_barriers.h): the input itself, of each
// overload (the Scalar one keeps aten::addmm whole in profiling plans,
// keep_addmm_whole.h).
template <class T>
T passThrough(const T& self, Region) {
  return self;
}
inline std::vector<at::Tensor> passThroughList(at::TensorList tensors, Region) {
  return tensors.vec();
}

} // namespace jitamp
