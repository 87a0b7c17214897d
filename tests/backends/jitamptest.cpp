// jitamptest: a test accelerator behind PyTorch's PrivateUse1 device type,
// with its own autocast policy. Built and loaded by jitamptest.py (read its
// docstring first: what the backend is for, and the policy table).
//
// Design:
//   * Memory is host memory. The allocator hands out CPU memory tagged
//     jitamptest:0, so a jitamptest tensor's bytes can be read in place by a
//     CPU tensor over the same address (`host_alias`).
//   * Kernels are CPU's. A boxed fallback for the PrivateUse1 key moves the
//     arguments to CPU, runs CPU's kernel and moves the results back
//     (at::native::cpu_fallback), so values are CPU's bit for bit. Only what
//     must not be copied is written here: allocation, copies, views, resizes,
//     `set_`, scalar reads and fills.
//   * Ops whose PrivateUse1 kernel would otherwise be a CompositeExplicitAutograd
//     decomposition although CPU has its own kernel (native_layer_norm,
//     native_group_norm, ...) are sent to CPU's kernel too, found at load time
//     (see route_composites_to_cpu), as are convolution's entry points: on a
//     device that is neither CPU nor CUDA, convolution picks the "overrideable"
//     backend, which only throws.
//   * Autocast: a fall-through for every op on AutocastPrivateUse1 (PyTorch
//     registers none for that key) and a deliberately unusual policy for a few
//     ops, so that a jitamp which applied CPU's or CUDA's policy to this device
//     gives a different dtype than eager does.
//   * One device (index 0), a device guard and PrivateUse1 hooks; the autograd
//     engine needs both (checked on 2.4.1, 2.13, 2.15: without the hooks,
//     backward fails with "Please register PrivateUse1HooksInterface").
//
// Sources written for this project after the pattern of PyTorch's
// open-registration test extension (test/cpp_extensions/open_registration_extension).

#include <ATen/ATen.h>
#include <ATen/EmptyTensor.h>
#include <ATen/Operators.h>
#include <ATen/autocast_mode.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/resize_native.h>
#include <ATen/ops/set_native.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_as_complex_native.h>
#include <ATen/ops/view_as_real_native.h>
#include <ATen/ops/view_native.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/core/impl/alloc_cpu.h>
#include <torch/library.h>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

namespace jitamptest {
namespace {

constexpr c10::DeviceType kDevice = c10::DeviceType::PrivateUse1;
constexpr c10::DeviceIndex kOnlyIndex = 0;

c10::Device the_device() {
  return c10::Device(kDevice, kOnlyIndex);
}

void check_index(c10::DeviceIndex index) {
  TORCH_CHECK(
      index == kOnlyIndex || index == -1,
      "jitamptest has one device (index 0); got index ",
      static_cast<int>(index));
}

// ---------------------------------------------------------------- memory

void free_host(void* ptr) {
  c10::free_cpu(ptr);
}

struct HostMemoryAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t nbytes) override {
    void* data = nbytes == 0 ? nullptr : c10::alloc_cpu(nbytes);
    return {data, data, &free_host, the_device()};
  }
  c10::DeleterFnPtr raw_deleter() const override {
    return &free_host;
  }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }
};

HostMemoryAllocator host_memory_allocator;

// Registered at load time by REGISTER_ALLOCATOR (c10::SetAllocator).
REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &host_memory_allocator)

bool is_ours(const at::Tensor& t) {
  return t.device().type() == kDevice;
}

// A CPU tensor over the same bytes as `t` (sizes, strides, dtype, conj/neg
// bits kept). Writes through it are writes to `t`.
at::Tensor host_alias(const at::Tensor& t) {
  if (!is_ours(t)) {
    return t;
  }
  auto options = at::TensorOptions().dtype(t.scalar_type()).device(at::kCPU);
  at::Tensor h;
  if (t.numel() == 0) {
    h = at::empty_strided(t.sizes(), t.strides(), options);
  } else {
    h = at::from_blob(
        const_cast<void*>(t.const_data_ptr()), t.sizes(), t.strides(), options);
  }
  if (t.is_conj()) {
    h = h._conj();
  }
  if (t.is_neg()) {
    h = h._neg_view();
  }
  return h;
}

// "Pinned" host memory for tensor.pin_memory() (on recent PyTorch the default
// device of pin_memory() is the accelerator, which this backend becomes once
// registered). Ordinary host memory, remembered so that is_pinned() answers.
std::mutex pinned_mutex;
std::unordered_set<void*> pinned_blocks;

void free_pinned(void* ptr) {
  {
    std::lock_guard<std::mutex> lock(pinned_mutex);
    pinned_blocks.erase(ptr);
  }
  c10::free_cpu(ptr);
}

struct PinnedHostAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t nbytes) override {
    void* data = nbytes == 0 ? nullptr : c10::alloc_cpu(nbytes);
    if (data != nullptr) {
      std::lock_guard<std::mutex> lock(pinned_mutex);
      pinned_blocks.insert(data);
    }
    return {data, data, &free_pinned, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override {
    return &free_pinned;
  }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }
};

PinnedHostAllocator pinned_host_allocator;

// ---------------------------------------------------------------- device guard

struct GuardImpl final : c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override {
    return kDevice;
  }
  c10::Device exchangeDevice(c10::Device d) const override {
    TORCH_INTERNAL_ASSERT(d.type() == kDevice);
    check_index(d.index());
    return the_device();
  }
  c10::Device getDevice() const override {
    return the_device();
  }
  void setDevice(c10::Device d) const override {
    TORCH_INTERNAL_ASSERT(d.type() == kDevice);
    check_index(d.index());
  }
  void uncheckedSetDevice(c10::Device) const noexcept override {}
  // One stream per device: kernels run synchronously on the host.
  c10::Stream getStream(c10::Device) const noexcept override {
    return c10::Stream(c10::Stream::DEFAULT, the_device());
  }
  c10::Stream getDefaultStream(c10::Device) const override {
    return c10::Stream(c10::Stream::DEFAULT, the_device());
  }
  c10::Stream getStreamFromGlobalPool(c10::Device, bool) const override {
    return c10::Stream(c10::Stream::DEFAULT, the_device());
  }
  c10::Stream exchangeStream(c10::Stream) const noexcept override {
    return c10::Stream(c10::Stream::DEFAULT, the_device());
  }
  c10::DeviceIndex deviceCount() const noexcept override {
    return 1;
  }
  // Events: all work is complete when a kernel returns.
  void record(
      void** /*event*/,
      const c10::Stream& /*stream*/,
      const c10::DeviceIndex /*device_index*/,
      const c10::EventFlag /*flag*/) const override {}
  void block(void* /*event*/, const c10::Stream& /*stream*/) const override {}
  bool queryEvent(void* /*event*/) const override {
    return true;
  }
  void destroyEvent(void* /*event*/, const c10::DeviceIndex /*device_index*/)
      const noexcept override {}
  bool queryStream(const c10::Stream& /*stream*/) const override {
    return true;
  }
  void synchronizeStream(const c10::Stream& /*stream*/) const override {}
  void synchronizeEvent(void* /*event*/) const override {}
  // Newer PyTorch only (no `override`, so older headers compile too).
  void synchronizeDevice(const c10::DeviceIndex /*device_index*/) const {}
  void recordDataPtrOnStream(const c10::DataPtr&, const c10::Stream&)
      const override {}
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, GuardImpl);

// ---------------------------------------------------------------- hooks

struct Hooks final : at::PrivateUse1HooksInterface {
  // Newer PyTorch only (no `override`, so older headers compile too).
  bool isBuilt() const {
    return true;
  }
  bool isAvailable() const {
    return true;
  }
  bool hasPrimaryContext(c10::DeviceIndex /*device_index*/) const override {
    return true;
  }
  c10::DeviceIndex deviceCount() const override {
    return 1;
  }
  void setCurrentDevice(c10::DeviceIndex device) const override {
    check_index(device);
  }
  c10::DeviceIndex getCurrentDevice() const override {
    return kOnlyIndex;
  }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex device) const override {
    check_index(device);
    return kOnlyIndex;
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex device) const override {
    check_index(device);
    return kOnlyIndex;
  }
  at::Device getDeviceFromPtr(void* /*data*/) const override {
    return the_device();
  }
  c10::Allocator* getPinnedMemoryAllocator() const override {
    return &pinned_host_allocator;
  }
  // Newer PyTorch only (no `override`, so older headers compile too).
  bool isPinnedPtr(const void* data) const {
    std::lock_guard<std::mutex> lock(pinned_mutex);
    return pinned_blocks.count(const_cast<void*>(data)) != 0;
  }
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize)
      const override {
    at::native::resize_bytes_cpu(storage.unsafeGetStorageImpl(), newsize);
  }
};

struct RegisterHooks {
  RegisterHooks() {
    static Hooks hooks;
    at::RegisterPrivateUse1HooksInterface(&hooks);
  }
};
RegisterHooks register_hooks;

// ---------------------------------------------------------------- memory kernels

void check_factory_options(
    std::optional<c10::Layout> layout,
    std::optional<c10::Device> device,
    std::optional<bool> pin_memory) {
  TORCH_CHECK(
      c10::layout_or_default(layout) == c10::Layout::Strided,
      "jitamptest supports strided tensors only");
  TORCH_CHECK(
      !c10::pinned_memory_or_default(pin_memory),
      "jitamptest tensors cannot be pinned (pinning is for CPU tensors)");
  if (device.has_value()) {
    TORCH_INTERNAL_ASSERT(device->type() == kDevice);
    check_index(device->index());
  }
}

at::Tensor empty_memory_format(
    at::IntArrayRef size,
    std::optional<at::ScalarType> dtype,
    std::optional<at::Layout> layout,
    std::optional<at::Device> device,
    std::optional<bool> pin_memory,
    std::optional<at::MemoryFormat> memory_format) {
  check_factory_options(layout, device, pin_memory);
  return at::detail::empty_generic(
      size,
      &host_memory_allocator,
      c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
      c10::dtype_or_default(dtype),
      memory_format);
}

at::Tensor empty_strided(
    at::IntArrayRef size,
    at::IntArrayRef stride,
    std::optional<at::ScalarType> dtype,
    std::optional<at::Layout> layout,
    std::optional<at::Device> device,
    std::optional<bool> pin_memory) {
  check_factory_options(layout, device, pin_memory);
  return at::detail::empty_strided_generic(
      size,
      stride,
      &host_memory_allocator,
      c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
      c10::dtype_or_default(dtype));
}

// Copies `self` into `dst`; either may be on CPU, the other (or both) here.
// CPU's copy_ does the work (broadcasting, dtype conversion, strides).
at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool /*non_blocking*/) {
  TORCH_CHECK(
      (self.is_cpu() || is_ours(self)) && (dst.is_cpu() || is_ours(dst)),
      "jitamptest copies only to and from CPU; got ",
      self.device(),
      " -> ",
      dst.device());
  if (dst.numel() == 0) {
    return dst;
  }
  at::Tensor host_dst = host_alias(dst);
  host_dst.copy_(host_alias(self));
  return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  dst.resize_(self.sizes());
  return copy_from(self, dst, false);
}

at::Scalar local_scalar_dense(const at::Tensor& self) {
  return at::_local_scalar_dense(host_alias(self));
}

at::Tensor& fill_scalar_(at::Tensor& self, const at::Scalar& value) {
  if (self.numel() != 0) {
    host_alias(self).fill_(value);
  }
  return self;
}

at::Tensor& zero_(at::Tensor& self) {
  if (self.numel() != 0) {
    host_alias(self).zero_();
  }
  return self;
}

at::Tensor as_strided(
    const at::Tensor& self,
    at::IntArrayRef size,
    at::IntArrayRef stride,
    std::optional<int64_t> storage_offset) {
  return at::native::as_strided_tensorimpl(self, size, stride, storage_offset);
}

at::Tensor view(const at::Tensor& self, at::IntArrayRef size) {
  return at::native::view(self, size);
}

at::Tensor reshape_alias(
    const at::Tensor& self,
    at::IntArrayRef size,
    at::IntArrayRef stride) {
  return at::native::_reshape_alias(self, size, stride);
}

at::Tensor unfold(const at::Tensor& self, int64_t dimension, int64_t size, int64_t step) {
  return at::native::unfold(self, dimension, size, step);
}

at::Tensor view_as_real(const at::Tensor& self) {
  return at::native::view_as_real(self);
}

at::Tensor view_as_complex(const at::Tensor& self) {
  return at::native::view_as_complex(self);
}

// CPU's resize_ grows the storage with the storage's own allocator (ours).
const at::Tensor& resize_(
    const at::Tensor& self,
    at::IntArrayRef size,
    std::optional<at::MemoryFormat> memory_format) {
  return at::native::resize_(self, size, memory_format);
}

at::Tensor& set_source_storage_(at::Tensor& self, at::Storage source) {
  return at::native::set_(self, source);
}

at::Tensor& set_source_storage_offset_(
    at::Tensor& self,
    at::Storage source,
    int64_t storage_offset,
    at::IntArrayRef size,
    at::IntArrayRef stride) {
  return at::native::set_storage_cpu_(self, source, storage_offset, size, stride);
}

at::Tensor& set_source_tensor_(at::Tensor& self, const at::Tensor& source) {
  return at::native::set_tensor_(self, source);
}

at::Tensor& set_empty_(at::Tensor& self) {
  c10::Storage storage(
      c10::Storage::use_byte_size_t(), 0, &host_memory_allocator, /*resizable=*/true);
  return self.set_(storage, 0, {0}, {});
}

// ---------------------------------------------------------------- CPU kernels

// error_on_views: a view op that reached the fallback would return a copy,
// silently breaking aliasing; every view op with a backend kernel on CPU has
// an explicit kernel above, so this only fires on a missing registration.
void run_on_cpu(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  at::native::cpu_fallback(op, stack, /*error_on_views=*/true);
}

// Ops routed to CPU's kernel at load time (besides the global fallback).
std::vector<std::string>& routed_ops() {
  static std::vector<std::string> names;
  return names;
}

// The PrivateUse1 fallback only catches ops that have no kernel for the key.
// A CompositeExplicitAutograd kernel covers every backend key, so an op with
// both a CPU kernel and a CompositeExplicitAutograd kernel (native_layer_norm,
// native_group_norm, addr, _stack, ...) would run the generic decomposition
// here, a different algorithm whose values need not be CPU's bit for bit.
// Route those to CPU's kernel, and convolution's entry points (see the header).
void route_composites_to_cpu() {
  static std::unique_ptr<torch::Library> library;
  library = std::make_unique<torch::Library>(
      torch::Library::IMPL, "aten", c10::DispatchKey::PrivateUse1, __FILE__, __LINE__);
  const std::vector<std::string> always = {
      "aten::convolution",
      "aten::convolution_backward",
      "aten::_convolution",
  };
  auto& dispatcher = c10::Dispatcher::singleton();
  std::vector<std::string> names;
  for (const auto& op_name : dispatcher.getAllOpNames()) {
    if (op_name.name.rfind("aten::", 0) != 0) {
      continue;
    }
    auto op = dispatcher.findOp(op_name);
    if (!op.has_value()) {
      continue;
    }
    std::string full = op_name.name;
    if (!op_name.overload_name.empty()) {
      full += "." + op_name.overload_name;
    }
    bool wanted = std::find(always.begin(), always.end(), full) != always.end() ||
        (op->hasKernelForDispatchKey(c10::DispatchKey::CPU) &&
         op->hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutograd));
    if (wanted && !op->hasKernelForDispatchKey(c10::DispatchKey::PrivateUse1)) {
      names.push_back(full);
    }
  }
  std::sort(names.begin(), names.end());
  for (const auto& name : names) {
    library->impl(
        name.c_str(), torch::CppFunction::makeFromBoxedFunction<&run_on_cpu>());
  }
  routed_ops() = names;
}

struct RouteAtLoad {
  RouteAtLoad() {
    route_composites_to_cpu();
  }
};

} // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", &empty_memory_format);
  m.impl("empty_strided", &empty_strided);
  m.impl("_copy_from", &copy_from);
  m.impl("_copy_from_and_resize", &copy_from_and_resize);
  m.impl("_local_scalar_dense", &local_scalar_dense);
  m.impl("fill_.Scalar", &fill_scalar_);
  m.impl("zero_", &zero_);
  m.impl("as_strided", &as_strided);
  m.impl("view", &view);
  m.impl("_reshape_alias", &reshape_alias);
  m.impl("unfold", &unfold);
  m.impl("view_as_real", &view_as_real);
  m.impl("view_as_complex", &view_as_complex);
  m.impl("resize_", &resize_);
  m.impl("set_.source_Storage", &set_source_storage_);
  m.impl("set_.source_Storage_storage_offset", &set_source_storage_offset_);
  m.impl("set_.source_Tensor", &set_source_tensor_);
  m.impl("set_", &set_empty_);
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&run_on_cpu>());
}

// _copy_from handles the conjugate and negative bits itself (host_alias keeps
// them and CPU's copy_ resolves them). Without these fall-throughs the
// Conjugate/Negative fallbacks would materialize the source with clone(),
// which copies with _copy_from again: endless recursion.
TORCH_LIBRARY_IMPL(aten, Conjugate, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}

TORCH_LIBRARY_IMPL(aten, Negative, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}

// After the TORCH_LIBRARY_IMPL blocks above, so that the explicit kernels are
// registered first and excluded from the routing.
RouteAtLoad route_at_load;

// ---------------------------------------------------------------- autocast

// PyTorch registers no fallback for AutocastPrivateUse1 (checked on 2.4.1,
// 2.13 and 2.15: aten/src/ATen/autocast_mode.cpp registers fall-throughs for
// AutocastCPU/CUDA/XPU/MPS/MTIA/MAIA only), so ops outside the table below
// pass through autocast unchanged.
TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFallthrough());
}

// The policy table, deliberately unlike CPU's and CUDA's (see jitamptest.py;
// "CPU"/"CUDA" give those devices' policy for the op, "none" = falls through).
TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
  KERNEL_PRIVATEUSEONE(mm, fp32) // CPU, CUDA: lower_precision_fp
  KERNEL_PRIVATEUSEONE(addmm, lower_precision_fp) // same as CPU, CUDA
  KERNEL_PRIVATEUSEONE(linear, lower_precision_fp) // same as CPU, CUDA
  KERNEL_PRIVATEUSEONE(conv2d, fp32) // CPU, CUDA: lower_precision_fp
  KERNEL_PRIVATEUSEONE(conv2d, padding, fp32)
  // CPU: none; CUDA: fp32_set_opt_dtype.
  KERNEL_PRIVATEUSEONE(sum, lower_precision_fp)
  KERNEL_PRIVATEUSEONE(sum, dim_IntList, lower_precision_fp)
  // CPU: none; CUDA: fp32_set_opt_dtype (as here).
  KERNEL_PRIVATEUSEONE(softmax, int, fp32_set_opt_dtype)
  KERNEL_PRIVATEUSEONE(layer_norm, lower_precision_fp) // CPU: none; CUDA: fp32
  KERNEL_PRIVATEUSEONE(mul, Tensor, fp32) // CPU, CUDA: none
  KERNEL_PRIVATEUSEONE(add, Tensor, promote) // CPU, CUDA: none
  KERNEL_PRIVATEUSEONE(cat, promote) // CPU: promote; CUDA: none
}

} // namespace jitamptest

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "jitamptest: a PrivateUse1 test backend with its own autocast policy";
  m.def(
      "routed_ops",
      []() { return jitamptest::routed_ops(); },
      "aten ops sent to CPU's kernel besides the PrivateUse1 fallback "
      "(CPU kernel + CompositeExplicitAutograd kernel, and convolution's entry points)");
  m.def("device_count", []() { return 1; });
}
