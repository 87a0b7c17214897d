// Scope ops: what `with torch.autocast(...)` does in eager, as TorchScript ops.
//
//   %guard, %region = jitamp::autocast_enter(%autocast) -- autocast.__enter__
//   %guard, %region = jitamp::autocast_enter.args(%device_type, %dtype,
//       %enabled, %cache_enabled)     -- the same, for a scope with no object
//   jitamp::autocast_exit(%guard)                       -- autocast.__exit__
//   %region = jitamp::autocast_caller_region()  -- the token outside scopes
//   %c = jitamp::autocast_cache_enabled(%arg)     -- __init__'s cache_enabled
//
// They change the same thread-local state eager's context manager changes
// (enabled and dtype for one device type, the cache flag, the nesting depth),
// in the same order. The guard remembers what to restore; if the graph is
// left by an exception before the exit op runs, the interpreter drops the
// guard and its destructor restores the state.
//
// The schemas are in library.cpp; all are CONSERVATIVE (with the default
// FROM_SCHEMA alias analysis dead code elimination deletes them). `region`
// values are the tokens the smart casts take (see library.cpp).
#include "ops/scope_ops.h"

#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>
#include <torch/csrc/jit/runtime/jit_exception.h>
#include <torch/library.h>

namespace jitamp {
namespace {

EagerScopeCheck& eagerScopeCheck() {
  static EagerScopeCheck check;
  return check;
}

// autocast.__init__ checks that eager does and the scripted __init__ skips:
// the device string, CUDA being there, a supported dtype. Returns whether
// the scope is enabled. CPU and CUDA are checked here; any other device
// type by eager's own __init__ where Python set the hook
// (SetEagerScopeCheck), since what it checks varies by device, backend and
// torch version (a renamed PrivateUse1 backend's dtypes come from its
// Python device module).
bool checkedEnabled(
    const std::string& device,
    c10::DeviceType device_type,
    at::ScalarType dtype,
    bool enabled) {
  TORCH_CHECK(
      at::autocast::is_autocast_available(device_type),
      "User specified an unsupported autocast device_type '",
      device,
      "'");
  const bool cpu = device_type == c10::DeviceType::CPU;
  if (!cpu && device_type != c10::DeviceType::CUDA && eagerScopeCheck()) {
    return eagerScopeCheck()(device, dtype, enabled);
  }
  if (!enabled) {
    return false;
  }
  if (device_type == c10::DeviceType::CUDA) {
    if (!at::hasCUDA()) {
      TORCH_WARN(
          "CUDA is not available or torch_xla is imported. Disabling autocast.");
      return false;
    }
    return true;
  }
  if (dtype != at::kBFloat16 && dtype != at::kHalf) {
    std::string name = device;
    for (auto& ch : name) {
      ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    }
    TORCH_WARN(
        "In ",
        name,
        " autocast, but the target dtype is not supported. Disabling autocast.\n",
        name,
        " Autocast only supports dtypes of torch.bfloat16, torch.float16 currently.");
    return false;
  }
  return true;
}

std::tuple<c10::intrusive_ptr<AutocastGuard>, int64_t> enterScope(
    const std::string& device,
    at::ScalarType dtype,
    bool requested,
    bool cache_enabled) {
  // (c10::Device parses and validates the string: "cpu" and "cuda", by
  // far the most common, are told apart without it)
  const c10::DeviceType device_type = device == "cpu" ? c10::DeviceType::CPU
      : device == "cuda"                               ? c10::DeviceType::CUDA
                                                       : c10::Device(device).type();
  const bool enabled = checkedEnabled(device, device_type, dtype, requested);

  auto guard = c10::make_intrusive<AutocastGuard>();
  guard->device_type = device_type;
  guard->prev_cache_enabled = at::autocast::is_autocast_cache_enabled();
  guard->prev_enabled = at::autocast::is_autocast_enabled(device_type);
  guard->prev_dtype = at::autocast::get_autocast_dtype(device_type);
  at::autocast::set_autocast_enabled(device_type, enabled);
  at::autocast::set_autocast_dtype(device_type, dtype);
  const int depth = at::autocast::increment_nesting();
  at::autocast::set_autocast_cache_enabled(cache_enabled);
  guard->enabled = enabled;
  guard->dtype = dtype;
  guard->cache_enabled = cache_enabled;
  guard->open = true;
  TaskAutocastGuard::noteScopeOpened(guard);
  NoteScopeEntered(
      device_type,
      guard->prev_enabled,
      guard->prev_dtype,
      enabled,
      dtype,
      depth);
  // The region token's value does not matter (only which graph value it
  // is); the nesting depth is as good as any.
  return {guard, depth};
}

} // namespace

void SetEagerScopeCheck(EagerScopeCheck check) {
  eagerScopeCheck() = std::move(check);
}

std::tuple<c10::intrusive_ptr<AutocastGuard>, int64_t> autocastEnter(
    const c10::IValue& autocast) {
  TORCH_CHECK(
      autocast.isObject(),
      "jitamp::autocast_enter expects a torch.autocast object, got ",
      autocast.tagKind());
  const auto& obj = autocast.toObjectRef();
  bool cache_enabled = at::autocast::is_autocast_cache_enabled();
  if (obj.type()->hasAttribute(kCacheAttr)) {
    const auto value = obj.getAttr(kCacheAttr);
    if (value.isBool()) {
      cache_enabled = value.toBool();
    }
  }
  return enterScope(
      obj.getAttr("device").toStringRef(),
      obj.getAttr("fast_dtype").toScalarType(),
      obj.getAttr("_enabled").toBool(),
      cache_enabled);
}

// `with torch.autocast(device_type, dtype, enabled, cache_enabled=...)`
// without an object: the scope WrapInAutocastScope puts around a body.
std::tuple<c10::intrusive_ptr<AutocastGuard>, int64_t> autocastEnterArgs(
    const std::string& device_type,
    at::ScalarType dtype,
    bool enabled,
    std::optional<bool> cache_enabled) {
  return enterScope(
      device_type, dtype, enabled, autocastCacheEnabled(cache_enabled));
}

void autocastExit(const c10::intrusive_ptr<AutocastGuard>& guard) {
  guard->close();
}

// The token of the region a function body starts in (what its caller set
// up). Its value does not matter.
int64_t autocastCallerRegion() {
  return 0;
}

void raiseOutsidePlan(
    const c10::OperatorHandle& op,
    torch::jit::Stack* /*stack*/) {
  TORCH_CHECK(
      false,
      op.schema().name(),
      " ran in a TorchScript function that holds code rewritten by jitamp "
      "but that jitamp has not configured: TorchScript's executor and its "
      "built-in JIT autocast would run it, and its results would differ "
      "from eager autocast's. Such a function is a copy made by "
      "Module::clone() or torch::jit::freeze() in C++: call "
      "jitamp::RewriteModule(copy) before its first call; or by a "
      "torch.jit.freeze or optimize_for_inference bound to a name before "
      "`import jitamp` (`from torch.jit import freeze` ahead of it gets "
      "torch's own): call jitamp.freeze(module) instead; or code scripted "
      "while jitamp was disabled that calls code scripted with it: script "
      "it with jitamp enabled, or call jitamp.rewrite() on it before its "
      "first call.");
}

// eager: `torch.is_autocast_cache_enabled() if cache_enabled is None else
// cache_enabled`, evaluated when the autocast object is built.
bool autocastCacheEnabled(std::optional<bool> cache_enabled) {
  return cache_enabled.has_value() ? *cache_enabled
                                   : at::autocast::is_autocast_cache_enabled();
}

void raiseAsEager(const std::string& message, const std::string& cls) {
  throw torch::jit::JITException(message, cls);
}

c10::intrusive_ptr<SuspendedAutocast> suspendAutocast() {
  return c10::make_intrusive<SuspendedAutocast>();
}

void resumeAutocast(const c10::intrusive_ptr<SuspendedAutocast>& suspended) {
  suspended->resume();
}

c10::TypePtr SuspendedAutocastType() {
  return c10::getCustomClassType<c10::intrusive_ptr<SuspendedAutocast>>();
}

} // namespace jitamp
