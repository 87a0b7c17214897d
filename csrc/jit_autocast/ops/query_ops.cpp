// Autocast queries that eager has and TorchScript lacks, as TorchScript ops.
//
// TorchScript compiles `torch.NAME(...)` to the builtin op `aten::NAME`
// where one is registered (torch.jit._builtins). TorchScript registers
// three autocast queries itself (is_autocast_enabled(), is_autocast_cpu_enabled(),
// get_autocast_dtype(str)); the others eager offers failed to script
// ("Unknown builtin op", or no overload taking a device type). These are
// them, under the names TorchScript looks up, each answering from eager's
// thread-local state as eager's Python binding does
// (torch/csrc/autograd/init.cpp), deprecation warnings included. jitamp's
// scope ops set that state, so the answers inside a scripted scope are
// eager's.
//
// Each is registered only where this torch has no op of that name and
// overload (a later torch that adds one keeps its own). CONSERVATIVE: they
// read thread-local state, so no pass may fold, merge or move them across
// a scope op. `torch.amp.is_autocast_available` is a Python function;
// python/jitamp/_library.py maps it to aten::_is_autocast_available.
#include <ATen/autocast_mode.h>
#include <c10/core/Device.h>
#include <c10/util/Exception.h>
#include <torch/csrc/jit/runtime/operator.h>

#include <string>

namespace jitamp {
namespace {

using torch::jit::Operation;
using torch::jit::Operator;
using torch::jit::Stack;

c10::DeviceType deviceTypeArgument(const c10::IValue& device_type) {
  return c10::Device(device_type.toStringRef()).type();
}

// A deprecated per-device query: eager warns, then answers for `device`.
Operation deprecatedEnabled(std::string name, c10::DeviceType device) {
  return [name, device](Stack& stack) {
    TORCH_WARN_DEPRECATION(
        "torch.is_autocast_", name, "_enabled() is deprecated. Please use "
        "torch.is_autocast_enabled('", name, "') instead.");
    torch::jit::push(stack, at::autocast::is_autocast_enabled(device));
  };
}

Operation deprecatedDtype(
    std::string name,
    std::string replacement,
    c10::DeviceType device) {
  return [name, replacement, device](Stack& stack) {
    TORCH_WARN_DEPRECATION(
        "torch.get_autocast_", name, "_dtype() is deprecated. Please use "
        "torch.get_autocast_dtype('", replacement, "') instead.");
    torch::jit::push(stack, at::autocast::get_autocast_dtype(device));
  };
}

bool isRegistered(const std::string& qualified_name, const std::string& overload) {
  for (const auto& op : torch::jit::getAllOperatorsFor(
           c10::Symbol::fromQualString(qualified_name))) {
    if (op->schema().overload_name() == overload) {
      return true;
    }
  }
  return false;
}

// Registers each query this torch lacks; returns how many.
size_t registerQueriesThisTorchLacks() {
  struct Query {
    const char* schema;
    const char* name;
    const char* overload;
    Operation operation;
  };
  const Query queries[] = {
      {"aten::is_autocast_enabled.device_type(str device_type) -> bool",
       "aten::is_autocast_enabled", "device_type",
       [](Stack& stack) {
         const auto device = deviceTypeArgument(torch::jit::pop(stack));
         torch::jit::push(stack, at::autocast::is_autocast_enabled(device));
       }},
      {"aten::is_autocast_cache_enabled() -> bool",
       "aten::is_autocast_cache_enabled", "",
       [](Stack& stack) {
         torch::jit::push(stack, at::autocast::is_autocast_cache_enabled());
       }},
      {"aten::_is_autocast_available(str device_type) -> bool",
       "aten::_is_autocast_available", "",
       [](Stack& stack) {
         const auto device = deviceTypeArgument(torch::jit::pop(stack));
         torch::jit::push(stack, at::autocast::is_autocast_available(device));
       }},
      {"aten::get_autocast_cpu_dtype() -> ScalarType",
       "aten::get_autocast_cpu_dtype", "",
       deprecatedDtype("cpu", "cpu", c10::DeviceType::CPU)},
      {"aten::get_autocast_gpu_dtype() -> ScalarType",
       "aten::get_autocast_gpu_dtype", "",
       deprecatedDtype("gpu", "cuda", c10::DeviceType::CUDA)},
      {"aten::get_autocast_ipu_dtype() -> ScalarType",
       "aten::get_autocast_ipu_dtype", "",
       deprecatedDtype("ipu", "ipu", c10::DeviceType::IPU)},
      {"aten::get_autocast_xla_dtype() -> ScalarType",
       "aten::get_autocast_xla_dtype", "",
       deprecatedDtype("xla", "xla", c10::DeviceType::XLA)},
      {"aten::is_autocast_ipu_enabled() -> bool",
       "aten::is_autocast_ipu_enabled", "",
       deprecatedEnabled("ipu", c10::DeviceType::IPU)},
      {"aten::is_autocast_xla_enabled() -> bool",
       "aten::is_autocast_xla_enabled", "",
       deprecatedEnabled("xla", c10::DeviceType::XLA)},
  };
  size_t count = 0;
  for (const Query& q : queries) {
    if (!isRegistered(q.name, q.overload)) {
      torch::jit::registerOperator(
          Operator(q.schema, q.operation, c10::AliasAnalysisKind::CONSERVATIVE));
      ++count;
    }
  }
  return count;
}

const size_t queriesRegistered = registerQueriesThisTorchLacks();

} // namespace
} // namespace jitamp
