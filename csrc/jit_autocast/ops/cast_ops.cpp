// Smart casts: jitamp::autocast_to_fp16, autocast_to_fp32, autocast_promote.
//
// The pass puts one before each op that eager autocast handles. Each decides
// at run time, from its input's device and dtype and the thread's autocast
// state, exactly what eager's autocast kernel for that op would do to the
// input, and does it through eager's own cast cache. When nothing applies it
// returns its input itself (no copy).
//
// The kernels are CompositeImplicitAutograd: autograd records the copy they
// make (aten::_to_copy, so gradients come back in the input's dtype, as in
// eager), and
// fake/meta tensors run the same code, which is what shape propagation and
// torch.library.opcheck need.
//
// Their result depends on thread-local state that the scope ops change:
// each takes the token of its autocast region as an input (see
// library.cpp), which the kernels do not read.
// Registered in library.cpp.
#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <ATen/record_function.h>
#include <c10/core/InferenceMode.h>
#include <torch/csrc/autograd/function.h>
#include <torch/library.h>

#include "ops/cast_ops.h"

#include "ir/op_casts.h"

#include <array>
#include <atomic>
#include <mutex>

namespace jitamp {

// Whether this thread's outermost autocast scope is jitamp's: no eager
// region around the scripted call, whose eager code could meet eager's cache
// after it (NoteScopeEntered, NoteScopeExited).
bool& regionIsJitamps() {
  thread_local bool is_jitamps = false;
  return is_jitamps;
}

// `devices` is the constant the pass writes: "cpu", "cuda" or "cpu,cuda" --
// the devices on which eager gives the op this policy. Those three are told
// apart by their length (this runs for every cast); anything else is parsed.
bool namesDevice(c10::string_view devices, c10::DeviceType device_type) {
  const bool cpu = device_type == c10::DeviceType::CPU;
  switch (devices.size()) {
    case 3:
      if (devices == "cpu") {
        return cpu;
      }
      break;
    case 4:
      if (devices == "cuda") {
        return !cpu;
      }
      break;
    case 8:
      if (devices == "cpu,cuda") {
        return true;
      }
      break;
    default:
      break;
  }
  TORCH_CHECK(
      devices.find("cpu") != c10::string_view::npos ||
          devices.find("cuda") != c10::string_view::npos,
      "jitamp: devices must name 'cpu' and/or 'cuda', got '",
      std::string(devices),
      "'");
  // "cpu" is not a substring of "cuda" and vice versa.
  return devices.find(cpu ? "cpu" : "cuda") != c10::string_view::npos;
}

bool carriesAutocastKey(const at::Tensor& tensor, c10::DeviceType device_type) {
  return tensor.key_set().has(
      at::autocast::get_autocast_dispatch_key_from_device_type(device_type));
}

namespace {

using at::Tensor;
using c10::DeviceType;

// What eager's cached_cast makes of a weight's cast with grad mode off
// (with the cache on, outside inference mode). Asked once, with a weight
// of our own that lives for the whole process (its cache entry is keyed by
// its address and stays until the next outermost scope exit).
struct EagerNoGradCasts {
  // Does its cache hand such a cast to a later use with grad mode on
  // (which then gets no gradient)? Older torch (2.4, 2.9) does, newer
  // (2.13) casts again.
  bool handed_to_grad_uses = false;
  // Does such a cast require grad? torch 2.13 makes it with grad mode on
  // (so that the cast it caches serves later grad uses, PyTorch's fix of
  // issue 158232): an autograd node, and a tensor that requires grad,
  // which composite ops read (matmul folds a batch into one mm where its
  // weight's cast requires grad, and runs bmm where it does not).
  bool require_grad = false;
};

// Eager's cast of `self` to `dtype` through its cache, with the cache on
// and `dtype` the device type's lower precision for the call (eager caches
// a cast only then); both put back after.
Tensor castInEagerCache(
    at::ScalarType dtype,
    const Tensor& self,
    DeviceType device_type) {
  const at::ScalarType dtype_was = at::autocast::get_autocast_dtype(device_type);
  const bool cache_was_enabled = at::autocast::is_autocast_cache_enabled();
  at::autocast::set_autocast_dtype(device_type, dtype);
  at::autocast::set_autocast_cache_enabled(true);
  Tensor cast = at::autocast::cached_cast(dtype, self, device_type);
  at::autocast::set_autocast_cache_enabled(cache_was_enabled);
  at::autocast::set_autocast_dtype(device_type, dtype_was);
  return cast;
}

const EagerNoGradCasts& eagerNoGradCasts() {
  static const EagerNoGradCasts casts = [] {
    // Asked where the first no-grad cast runs, which may be inside
    // torch.inference_mode() (its tensors are never cached) or a float16
    // region (eager caches only casts to the region's dtype): with neither,
    // the answer holds for the whole process (torch 2.4.1 answered wrong
    // after a float16 region's frozen model had cast first).
    c10::InferenceMode not_inference(false);
    static const Tensor* probe =
        new Tensor(at::ones({1}, at::kFloat).set_requires_grad(true));
    EagerNoGradCasts found;
    {
      at::NoGradGuard no_grad;
      found.require_grad =
          castInEagerCache(at::kBFloat16, *probe, DeviceType::CPU)
              .requires_grad();
    }
    {
      at::AutoGradMode grad(true);
      found.handed_to_grad_uses =
          !castInEagerCache(at::kBFloat16, *probe, DeviceType::CPU)
               .requires_grad();
    }
    return found;
  }();
  return casts;
}

// Puts into eager's cache the cast of `self` to `dtype` that eager's would
// hold: the one it made at the weight's first use in the region, under a
// scope of that lower precision, with grad mode off, which jitamp copied
// uncached (with the cache on, as eager's was then: eagerWouldCache).
void keepInEagerCache(
    at::ScalarType dtype,
    const Tensor& self,
    DeviceType device_type) {
  at::NoGradGuard no_grad;
  castInEagerCache(dtype, self, device_type);
}

// The weights (what eager's cache keeps) that no-grad casts copied without
// the cache since eager's cache was last cleared, with the dtype of that
// copy: the last kSlots of the process, shared by all threads as eager's
// cache is (a forked task runs on another thread: its first cast of a
// weight is the caller's first cast too; fuzz finding 23). A weight met
// again (in a loop, or used twice) is cast through the cache from then on,
// so it is copied at most twice per region instead of at every use; met
// under another lower precision, the record says which cast eager's cache
// would hold (keepInEagerCache). So a record must not outlive eager's
// cache: a jitamp scope's outermost exit forgets them, and so does a clear
// made elsewhere (another thread's outermost exit, a task's region that
// outlived its scope closed by an eager region, or
// torch.clear_autocast_cache()), which the marker tells: the first record
// puts the cast of a leaf of our own in eager's cache and keeps only a
// weak reference to that cast, which the cache's clear is the only one to
// drop (the record of another dtype then gave the weight's next op the
// cast of the previous call's dtype: "expected m1 and m2 to have the same
// dtype"; fuzz finding 22). A record whose address was reused only sends
// a cast through the cache, which is what eager does anyway.
//
// Eager's own kernels (a composite op's inner ops: the linear of an rnn
// cell, einsum's bmm) meet eager's cache too, without a smart cast to
// consult the records. That matters only where one region casts under two
// lower precisions (eager's cache hands either the other's cast), so the
// scope ops note each lower precision a region enables (note): from the
// second on, the region is "mixed", its recorded casts are put in eager's
// cache as eager's would hold them, and no-grad casts go through the cache
// until it is cleared (fuzz finding 25: an rnn cell's linear under a
// bfloat16 scope nested in a float16 one).
class UncachedCasts {
 public:
  // The dtype `weight` was copied to uncached, if it was since eager's
  // cache was last cleared; if it was not and `record` is set, records it
  // as copied to `dtype` now.
  std::optional<at::ScalarType> firstCast(
      const Tensor& weight,
      at::ScalarType dtype,
      bool record) {
    const c10::TensorImpl* impl = weight.unsafeGetTensorImpl();
    std::lock_guard<std::mutex> lock(mutex_);
    forgetIfClearedLocked();
    for (size_t i = 0; i < used_; ++i) {
      if (records_[i].impl == impl) {
        return records_[i].dtype;
      }
    }
    if (record) {
      if (used_ == 0) {
        marker_cast_ = putMarkerInCache();
      }
      records_[next_] = {impl, dtype, WeakImpl(weight.getIntrusivePtr())};
      next_ = (next_ + 1) % kSlots;
      used_ = std::min(used_ + 1, kSlots);
    }
    return std::nullopt;
  }

  void forget() {
    std::lock_guard<std::mutex> lock(mutex_);
    forgetLocked();
  }

  // Whether casts go through eager's cache until it is next cleared.
  bool mixed() const {
    return mixed_.load(std::memory_order_relaxed);
  }

  // A scope enter or exit left `device_type`'s autocast on with `dtype`.
  void note(DeviceType device_type, at::ScalarType dtype) {
    const auto i = static_cast<size_t>(device_type);
    if (i >= first_dtypes_.size() ||
        first_dtypes_[i].load(std::memory_order_relaxed) == dtype) {
      return;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    forgetIfClearedLocked();
    const at::ScalarType first = first_dtypes_[i].load();
    if (first == at::ScalarType::Undefined) {
      // No marker for this (the first record makes it): a clear made
      // elsewhere that leaves a first dtype from before it can only make
      // the region mixed sooner, and a mixed region casts through eager's
      // cache, as eager does. The marker's copy would cost every region,
      // used or not.
      first_dtypes_[i].store(dtype);
      return;
    }
    if (first == dtype || mixed_.load()) {
      return;
    }
    mixed_.store(true);
    for (size_t r = 0; r < used_; ++r) {
      auto impl = records_[r].weak.lock();
      if (impl.defined()) {
        const Tensor weight(std::move(impl));
        keepInEagerCache(records_[r].dtype, weight, weight.device().type());
      }
    }
  }

 private:
  using WeakImpl = c10::weak_intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>;
  // A weak reference to no tensor (weak_intrusive_ptr has no default).
  static WeakImpl noTensor() {
    return WeakImpl(c10::intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>());
  }
  struct Record {
    const c10::TensorImpl* impl = nullptr;
    at::ScalarType dtype = at::ScalarType::Undefined;
    WeakImpl weak = noTensor(); // to put its cast in eager's cache
  };

  // Eager's cache was cleared since the records were made: forgets them.
  // (Only the cache holds the marker's cast: its clear drops it.)
  void forgetIfClearedLocked() {
    if (used_ > 0 && marker_cast_.expired()) {
      forgetLocked();
    }
  }

  void forgetLocked() {
    for (size_t i = 0; i < used_; ++i) {
      records_[i] = Record{};
    }
    used_ = 0;
    next_ = 0;
    marker_cast_ = noTensor();
    for (auto& first : first_dtypes_) {
      first.store(at::ScalarType::Undefined);
    }
    mixed_.store(false);
  }

  // Puts the marker's cast in eager's cache; a weak reference to it. The
  // marker has no elements: its copy (once per region that records) is
  // bookkeeping, kept out of profiles, where it would read as a cast of
  // the model's. Eager's cache is keyed by the tensor alone, but takes a
  // cast only with the cache on and to the thread's lower precision: set
  // for the call (inside a float32 scope, which eager turns off but whose
  // dtype it sets, the marker would go uncached, and a live cache seem
  // cleared: seed 112605, index 19372; fuzz finding 26).
  static WeakImpl putMarkerInCache() {
    static const Tensor* marker = new Tensor( // lives as long as the process
        at::empty({0}, at::TensorOptions().dtype(at::kFloat))
            .set_requires_grad(true));
    // Below autograd: newer torch (2.13) makes each cached cast with grad
    // mode on, which would make the marker's cast an autograd node (and an
    // accumulator for the marker) at every region. Only its address is read.
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    at::NoGradGuard no_grad;
    // (turning recording off and on again rebuilds the thread's callbacks:
    // only where a profiler or an observer is there to see the copy)
    std::optional<at::DisableRecordFunctionGuard> unprofiled;
    if (at::hasCallbacks()) {
      unprofiled.emplace();
    }
    const at::ScalarType current =
        at::autocast::get_autocast_dtype(DeviceType::CPU);
    const at::ScalarType lookup =
        current == at::kHalf || current == at::kBFloat16 ? current
                                                         : at::kBFloat16;
    return WeakImpl(
        castInEagerCache(lookup, *marker, DeviceType::CPU).getIntrusivePtr());
  }

  static constexpr size_t kSlots = 32;
  std::array<Record, kSlots> records_{};
  size_t used_ = 0; // records_[0, used_) hold records
  size_t next_ = 0;
  WeakImpl marker_cast_ = noTensor();
  // The first lower precision each device type's autocast had in the region.
  std::array<std::atomic<at::ScalarType>, 2> first_dtypes_{
      at::ScalarType::Undefined, at::ScalarType::Undefined};
  std::atomic<bool> mixed_{false};
  std::mutex mutex_;
};


UncachedCasts& uncachedCasts() {
  static UncachedCasts* casts = new UncachedCasts(); // never destroyed
  return *casts;
}

// Eager's cached_cast, as the op's own autocast kernel meets it. The cache is
// keyed by the tensor alone, so in a region of another dtype nested in the
// one that cast a weight, it hands back that first cast (bfloat16 under a
// float16 region): eager's op gets it as it is. Given that cast, the op's
// kernel would cast it again (it is no leaf); given `self`, it meets the
// same entry and passes it on as eager does.
Tensor cachedCast(
    at::ScalarType to_type,
    const Tensor& self,
    DeviceType device_type) {
  Tensor cast = at::autocast::cached_cast(to_type, self, device_type);
  return cast.scalar_type() == to_type ? cast : self;
}

// What eager's cached_cast does with a cast it does not cache,
// `self.to(to_type)`, without aten::to's dispatch: its kernel (to_impl,
// CompositeImplicitAutograd) calls aten::_to_copy with these arguments,
// as the built-in JIT autocast's _autocast_to_reduced_precision does. The
// same copy and the same autograd node (ToCopyBackward0); a profile shows
// the _to_copy without an aten::to around it.
Tensor uncachedCast(const Tensor& self, at::ScalarType to_type) {
  return at::_to_copy(self, to_type);
}

// A weight's cast with grad mode off, made as eager's cache makes it but
// not kept: with grad mode on where eager's is (EagerNoGradCasts), so
// that it requires grad and has eager's node (ToCopyBackward0). Before,
// a matmul of a batch that does not fold without a copy, its weight cast
// uncached, ran bmm where eager's folds into mm, and raised another
// error for a float64 batch (fuzz seed 291216, index 4307). Inside
// torch.inference_mode() eager does not cache, and grad mode cannot
// record there: its cast, like this one, requires no grad.
Tensor uncachedWeightCast(const Tensor& self, at::ScalarType to_type) {
  if (eagerNoGradCasts().require_grad && !c10::InferenceMode::is_enabled()) {
    at::AutoGradMode grad(true);
    return uncachedCast(self, to_type);
  }
  return uncachedCast(self, to_type);
}

// Whether eager's cached_cast would keep this cast in its cache (its
// can_try_cache): a float32 leaf that requires grad, not a view, cast to
// the device type's lower precision, with the cache on.
bool eagerWouldCache(
    at::ScalarType to_type,
    const Tensor& self,
    DeviceType device_type) {
  return to_type == at::autocast::get_autocast_dtype(device_type) &&
      self.scalar_type() == at::kFloat && self.requires_grad() &&
      self.is_leaf() && !self.is_view() &&
      at::autocast::is_autocast_cache_enabled();
}


// Eager's cached_cast: its eligibility rule (floating, not float64, on this
// device type) and its weight cache -- except with grad mode off where
// eager keeps no-grad casts away from grad uses (see above). The cache
// keeps every cast weight alive until the outermost scope exits, so each
// call casts into fresh memory and the exit frees it all (in a no-grad
// residual MLP, most of the time autocast saves); uncached, each copy reuses
// the memory of the one before. So with grad mode off a weight's first cast
// in a region is uncached, and only one it meets again goes through the
// cache (UncachedCasts). The values are the same; docs/runtime-model.md ("The
// cast cache") has the one case that is not. Met again under a scope of another
// lower precision (either grad mode), eager's cache hands the op that first
// cast: it is put there first (keepInEagerCache), and the op's kernel meets
// it as eager's does.
Tensor eagerCast(
    at::ScalarType to_type,
    const Tensor& self,
    DeviceType device_type) {
  if (!carriesAutocastKey(self, device_type)) {
    return self; // the op's own autocast kernel decides (carriesAutocastKey)
  }
  if (!at::autocast::is_eligible(self, device_type) ||
      self.scalar_type() == to_type) {
    return self;
  }
  const bool through_cache = c10::GradMode::is_enabled() ||
      eagerNoGradCasts().handed_to_grad_uses || !regionIsJitamps() ||
      uncachedCasts().mixed();
  if (eagerWouldCache(to_type, self, device_type)) {
    const auto first =
        uncachedCasts().firstCast(self, to_type, /*record=*/!through_cache);
    if (first.has_value() && *first != to_type) {
      keepInEagerCache(*first, self, device_type);
      return self;
    }
    if (!first.has_value() && !through_cache) {
      return uncachedWeightCast(self, to_type); // recorded
    }
    return cachedCast(to_type, self, device_type);
  }
  return through_cache ? cachedCast(to_type, self, device_type)
                       : uncachedCast(self, to_type);
}

bool policyApplies(c10::string_view devices, DeviceType device_type) {
  if (device_type != DeviceType::CPU && device_type != DeviceType::CUDA) {
    return false;
  }
  return at::autocast::is_autocast_enabled(device_type) &&
      namesDevice(devices, device_type);
}

} // namespace

Tensor castTo(
    const Tensor& self,
    c10::string_view devices,
    bool lower_precision) {
  if (!self.defined()) {
    return self;
  }
  const DeviceType device_type = self.device().type();
  if (!policyApplies(devices, device_type)) {
    return self;
  }
  const at::ScalarType to_type = lower_precision
      ? at::autocast::get_autocast_dtype(device_type)
      : at::kFloat;
  if (self.scalar_type() == to_type) {
    return self; // the common case inside a scope: nothing to do
  }
  return eagerCast(to_type, self, device_type);
}

// A loop's smart cast of a value defined before the loop (and not written
// in the graph), made once before it by SimpleExecutorPlan for every
// iteration, whose autocast kernel then finds nothing to do. It gives what
// the first iteration's cast would, or `self` itself, which leaves each
// iteration's cast to the op's kernel, as in eager:
// - where the loop does not run (eager makes no cast, and none enters the
//   cache or the uncached-casts record);
// - with grad mode on and `self` requiring grad: each cast eager makes is
//   an autograd node of its own (one cast shared would make backward sum
//   the iterations' gradients in the low dtype), or eager's cache serves
//   them, which the kernel reaches directly.
// Otherwise every iteration gets the same values from it: no autograd
// records them. The plan puts it right before the loop, for a cast
// directly in the loop's body (so the first iteration reaches it), of a
// loop whose body changes no state a cast reads.
Tensor toFp16BeforeLoop(
    const Tensor& self,
    c10::string_view devices,
    int64_t max_trip_count,
    bool initial_condition,
    Region) {
  if (max_trip_count <= 0 || !initial_condition) {
    return self;
  }
  if (self.defined() && self.requires_grad() && c10::GradMode::is_enabled()) {
    return self;
  }
  return castTo(self, devices, /*lower_precision=*/true);
}

// fp32_set_opt_dtype: eager runs the op with dtype=float32 unless the caller
// gave one. Casting the input to float32 first computes the same thing.
Tensor toFp32IfNoDtype(
    const Tensor& self,
    c10::string_view devices,
    std::optional<at::ScalarType> dtype,
    Region) {
  if (dtype.has_value()) {
    return self;
  }
  return castTo(self, devices, /*lower_precision=*/false);
}

// promote: every eligible input to the widest eligible dtype among them,
// with eager's own prioritize() (which also raises where eager raises, e.g.
// float16 mixed with bfloat16).
namespace {

// `arguments`: the tensors are an op's separate arguments (cast in eager's
// argument order, eagerCastsLastArgumentFirst), not one list (cast first
// to last, as eager's cached_cast on a list does).
std::vector<Tensor> promote(
    at::TensorList tensors,
    c10::string_view devices,
    bool arguments) {
  std::vector<Tensor> out(tensors.begin(), tensors.end());
  const Tensor* first = nullptr;
  for (const auto& t : tensors) {
    if (t.defined()) {
      first = &t;
      break;
    }
  }
  if (first == nullptr) {
    return out;
  }
  const DeviceType device_type = first->device().type();
  if (!policyApplies(devices, device_type)) {
    return out;
  }
  at::ScalarType to_type =
      at::autocast::get_lower_precision_fp_from_device_type(device_type);
  for (const auto& t : tensors) {
    if (t.defined()) {
      to_type = at::autocast::prioritize(to_type, t, device_type);
    }
  }
  const bool last_first = arguments && eagerCastsLastArgumentFirst();
  for (size_t k = 0; k < out.size(); ++k) {
    Tensor& t = out[last_first ? out.size() - 1 - k : k];
    if (t.defined()) {
      t = eagerCast(to_type, t, device_type);
    }
  }
  return out;
}

} // namespace

std::tuple<Tensor, Tensor> promote2(
    const Tensor& a,
    const Tensor& b,
    c10::string_view devices,
    Region) {
  auto out = promote({a, b}, devices, /*arguments=*/true);
  return {out[0], out[1]};
}

std::tuple<Tensor, Tensor, Tensor> promote3(
    const Tensor& a,
    const Tensor& b,
    const Tensor& c,
    c10::string_view devices,
    Region) {
  auto out = promote({a, b, c}, devices, /*arguments=*/true);
  return {out[0], out[1], out[2]};
}

std::tuple<Tensor, Tensor, Tensor, Tensor> promote4(
    const Tensor& a,
    const Tensor& b,
    const Tensor& c,
    const Tensor& d,
    c10::string_view devices,
    Region) {
  auto out = promote({a, b, c, d}, devices, /*arguments=*/true);
  return {out[0], out[1], out[2], out[3]};
}

std::vector<Tensor> promoteList(
    at::TensorList tensors,
    c10::string_view devices,
    Region) {
  return promote(tensors, devices, /*arguments=*/false);
}

void ForgetUncachedCasts() {
  uncachedCasts().forget();
}

void NoteScopeEntered(
    c10::DeviceType device_type,
    bool was_enabled,
    at::ScalarType was_dtype,
    bool enabled,
    at::ScalarType dtype,
    int depth) {
  if (depth == 1) {
    regionIsJitamps() = true;
  }
  if (!regionIsJitamps()) {
    return; // its casts go through eager's cache
  }
  if (was_enabled) {
    uncachedCasts().note(device_type, was_dtype);
  }
  if (enabled) {
    uncachedCasts().note(device_type, dtype);
  }
}

void NoteScopeExited(
    c10::DeviceType device_type,
    bool enabled,
    at::ScalarType dtype,
    int depth) {
  if (depth == 0) {
    regionIsJitamps() = false;
  } else if (regionIsJitamps() && enabled) {
    uncachedCasts().note(device_type, dtype);
  }
}

} // namespace jitamp
