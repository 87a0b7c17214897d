// Scope ops: what `with torch.autocast(...)` does in eager, as TorchScript ops.
//
//   %guard = jitamp::autocast_enter(%autocast)   -- autocast.__enter__
//   jitamp::autocast_exit(%guard)                 -- autocast.__exit__
//   %c = jitamp::autocast_cache_enabled(%arg)     -- __init__'s cache_enabled
//   %v = jitamp::wait(%future)                    -- torch.jit.wait, blocking
//
// They change the same thread-local state eager's context manager changes
// (enabled and dtype for one device type, the cache flag, the nesting depth),
// in the same order. The guard remembers what to restore; if the graph is
// left by an exception before the exit op runs, the interpreter drops the
// guard and its destructor restores the state.
//
// All three are CONSERVATIVE: with the default FROM_SCHEMA alias analysis
// dead code elimination deletes them (nothing uses their outputs).
#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <ATen/core/ivalue.h>
#include <torch/custom_class.h>
#include <torch/library.h>

#include <thread>

namespace jitamp {
namespace {

// The attribute the pass adds to the autocast classes: eager's __init__
// resolves cache_enabled=None when the object is built, the scripted
// __init__ drops it. Keep the name in sync with jitamp_rewrite.cpp.
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
  // not be touched. (The task's thread gets its dispatch keys and dtypes back
  // from TorchScript's ThreadLocalState guard.)
  ~AutocastGuard() override {
    if (std::this_thread::get_id() == owner) {
      close();
    }
  }
};

// autocast.__init__ checks that eager does and the scripted __init__ skips:
// the device string, CUDA being there, a supported dtype. Returns whether
// the scope is enabled.
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
  if (!enabled) {
    return false;
  }
  if (device == "cuda") {
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

c10::intrusive_ptr<AutocastGuard> autocastEnter(const c10::IValue& autocast) {
  TORCH_CHECK(
      autocast.isObject(),
      "jitamp::autocast_enter expects a torch.autocast object, got ",
      autocast.tagKind());
  const auto& obj = autocast.toObjectRef();
  const std::string device = obj.getAttr("device").toStringRef();
  const at::ScalarType dtype = obj.getAttr("fast_dtype").toScalarType();
  const bool requested = obj.getAttr("_enabled").toBool();
  const c10::DeviceType device_type = c10::Device(device).type();

  bool cache_enabled = at::autocast::is_autocast_cache_enabled();
  if (obj.type()->hasAttribute(kCacheAttr)) {
    const auto value = obj.getAttr(kCacheAttr);
    if (value.isBool()) {
      cache_enabled = value.toBool();
    }
  }
  const bool enabled = checkedEnabled(device, device_type, dtype, requested);

  auto guard = c10::make_intrusive<AutocastGuard>();
  guard->device_type = device_type;
  guard->prev_cache_enabled = at::autocast::is_autocast_cache_enabled();
  guard->prev_enabled = at::autocast::is_autocast_enabled(device_type);
  guard->prev_dtype = at::autocast::get_autocast_dtype(device_type);
  at::autocast::set_autocast_enabled(device_type, enabled);
  at::autocast::set_autocast_dtype(device_type, dtype);
  at::autocast::increment_nesting();
  at::autocast::set_autocast_cache_enabled(cache_enabled);
  guard->open = true;
  return guard;
}

void autocastExit(const c10::intrusive_ptr<AutocastGuard>& guard) {
  guard->close();
}

// eager: `torch.is_autocast_cache_enabled() if cache_enabled is None else
// cache_enabled`, evaluated when the autocast object is built.
bool autocastCacheEnabled(std::optional<bool> cache_enabled) {
  return cache_enabled.has_value() ? *cache_enabled
                                   : at::autocast::is_autocast_cache_enabled();
}

// torch.jit.wait that blocks the calling thread. TorchScript's own
// aten::wait suspends the interpreter when the future is not ready, and the
// rest of the graph then runs on another thread: an autocast scope open at
// that point would be closed on that thread, leaving the caller's autocast
// state changed after the call. Eager's torch.jit.wait blocks, too.
c10::IValue waitOnThisThread(const c10::IValue& future) {
  auto fut = future.toFuture();
  fut->waitAndThrow();
  return fut->value();
}

} // namespace

TORCH_LIBRARY_FRAGMENT(jitamp, m) {
  m.class_<AutocastGuard>("AutocastGuard");
  m.def(torch::schema(
      "autocast_enter(Any autocast) -> __torch__.torch.classes.jitamp.AutocastGuard",
      c10::AliasAnalysisKind::CONSERVATIVE));
  m.def(torch::schema(
      "autocast_exit(__torch__.torch.classes.jitamp.AutocastGuard guard) -> ()",
      c10::AliasAnalysisKind::CONSERVATIVE));
  m.def(torch::schema(
      "autocast_cache_enabled(bool? cache_enabled) -> bool",
      c10::AliasAnalysisKind::CONSERVATIVE));
  m.def(torch::schema(
      "wait(Any future) -> Any", c10::AliasAnalysisKind::CONSERVATIVE));
  m.impl("wait", TORCH_FN(waitOnThisThread));
  m.impl("autocast_enter", TORCH_FN(autocastEnter));
  m.impl("autocast_exit", TORCH_FN(autocastExit));
  m.impl("autocast_cache_enabled", TORCH_FN(autocastCacheEnabled));
}

} // namespace jitamp
