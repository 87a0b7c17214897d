// jitamp::direct_call (direct_call.h): the op, and which ops may be one.
#include "ops/direct_call.h"

#include "ir/jitamp_ir.h"
#include "ir/policy_table.h"
#include "ir/op_casts.h"
#include "ops/cast_ops.h"

#include <ATen/autocast_mode.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/custom_operator.h>

#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace jitamp {
namespace {

using c10::DeviceType;
using c10::DispatchKey;
using c10::IValue;
using torch::jit::Node;
using torch::jit::Operation;
using torch::jit::Stack;

// What cached_cast does to an argument of this type.
enum class Arg : uint8_t {
  Other, // passes it on
  Tensor,
  OptionalTensor,
  TensorList, // casts each element
};

bool mentionsTensor(const c10::TypePtr& type) {
  if (type->kind() == c10::TypeKind::TensorType) {
    return true;
  }
  for (const c10::TypePtr& contained : type->containedTypes()) {
    if (mentionsTensor(contained)) {
      return true;
    }
  }
  return false;
}

std::vector<Arg> argumentKinds(const c10::FunctionSchema& schema) {
  std::vector<Arg> kinds;
  for (const c10::Argument& argument : schema.arguments()) {
    const c10::TypePtr& type = argument.real_type();
    if (*type == *c10::TensorType::get()) {
      kinds.push_back(Arg::Tensor);
    } else if (*type == *c10::OptionalType::ofTensor()) {
      kinds.push_back(Arg::OptionalTensor);
    } else if (*type == *c10::ListType::ofTensors()) {
      kinds.push_back(Arg::TensorList);
    } else if (mentionsTensor(type)) {
      return {}; // List[Tensor?], tuples: no op with a plain kernel has them
    } else {
      kinds.push_back(Arg::Other);
    }
  }
  return kinds;
}

// Whether the op's kernel for `key` is one ATen/autocast_mode.cpp registers,
// its plain wrapper, as the dispatcher's table says: not a kernel of its
// own (CUDA's _cudnn_rnn, ATen/native/cudnn/AutocastRNN.cpp), not one another library
// registered over it (Intel's extension registers its own AutocastCPU
// kernels), not the fallthrough. A build without registration sites
// says neither: no.
bool isEagersWrapper(const c10::OperatorHandle& op, DispatchKey key) {
  const std::string table = "\n" + op.dumpComputedTable();
  const size_t at =
      table.find("\n" + std::string(c10::toString(key)) + ": registered at ");
  if (at == std::string::npos) {
    return false;
  }
  const std::string_view entry = std::string_view(table).substr(
      at + 1, table.find('\n', at + 1) - (at + 1));
  return entry.find("ATen/autocast_mode.cpp:") != std::string_view::npos &&
      entry.ends_with("[kernel]");
}

// The policy of the op's kernel for `device`'s autocast key where that
// kernel is eager's plain wrapper of a policy that only casts
// (CastPolicy::None otherwise). The policy is the table's.
CastPolicy plainPolicy(
    const c10::OperatorHandle& op,
    CastPolicy policy,
    DeviceType device) {
  if (policy != CastPolicy::LowerPrecisionFp && policy != CastPolicy::Fp32 &&
      policy != CastPolicy::Promote) {
    return CastPolicy::None;
  }
  return isEagersWrapper(
             op, at::autocast::get_autocast_dispatch_key_from_device_type(device))
      ? policy
      : CastPolicy::None;
}

struct PlainPolicies {
  CastPolicy cpu = CastPolicy::None;
  CastPolicy cuda = CastPolicy::None;
};

// plainPolicy on both devices, asked once per op: the table takes a lock,
// the dispatcher's dump builds a string of every key. (A library that
// registers autocast kernels after an op's first plan is not seen.)
PlainPolicies plainPolicies(const c10::OperatorHandle& op) {
  static std::mutex mutex;
  static std::unordered_map<std::string, PlainPolicies> known;
  const c10::FunctionSchema& schema = op.schema();
  const std::string name = qualified(schema.name(), schema.overload_name());
  std::lock_guard<std::mutex> lock(mutex);
  auto it = known.find(name);
  if (it == known.end()) {
    const EffectivePolicy policy =
        effectivePolicy(schema.name(), schema.overload_name());
    it = known
             .emplace(
                 name,
                 PlainPolicies{
                     plainPolicy(op, policy.cpu, DeviceType::CPU),
                     plainPolicy(op, policy.cuda, DeviceType::CUDA)})
             .first;
  }
  return it->second;
}

// A smart cast the call makes first (kDirectCallCastArgs).
struct SmartCast {
  size_t arg = 0;
  bool to_fp32 = false;
  std::string devices;
};

class DirectCall {
 public:
  DirectCall(
      const c10::OperatorHandle& op,
      std::vector<Arg> args,
      std::vector<SmartCast> smart_casts)
      : op_(op), args_(std::move(args)), smart_casts_(std::move(smart_casts)) {
    const PlainPolicies policies = plainPolicies(op);
    cpu_ = policies.cpu;
    cuda_ = policies.cuda;
    last_first_ = eagerCastsLastArgumentFirst();
    if (cpu_ != CastPolicy::None) {
      plain_keys_ = plain_keys_.add(DispatchKey::AutocastCPU);
    }
    if (cuda_ != CastPolicy::None) {
      plain_keys_ = plain_keys_.add(DispatchKey::AutocastCUDA);
    }
  }

  void operator()(Stack& stack) const {
    IValue* args = stack.data() + stack.size() - args_.size();
    for (const SmartCast& smart : smart_casts_) { // the plan's casts, as they ran
      IValue& arg = args[smart.arg];
      arg = castTo(arg.toTensor(), smart.devices, !smart.to_fp32);
    }
    const c10::impl::LocalDispatchKeySet local =
        c10::impl::tls_local_dispatch_key_set();
    if (local.excluded_.isSupersetOf(plain_keys_)) {
      op_.callBoxed(stack); // autocast off wherever the kernel is plain
      return;
    }
    const DispatchKey key = autocastKey(args, local);
    const CastPolicy policy = key == DispatchKey::AutocastCPU ? cpu_
        : key == DispatchKey::AutocastCUDA                    ? cuda_
                                                              : CastPolicy::None;
    if (policy == CastPolicy::None) {
      op_.callBoxed(stack);
      return;
    }
    const DeviceType device =
        key == DispatchKey::AutocastCPU ? DeviceType::CPU : DeviceType::CUDA;
    // As WrapFunction_::call: the key excluded, the arguments cast, the op
    // called.
    c10::impl::ExcludeDispatchKeyGuard no_autocast(key);
    cast(args, targetType(policy, device, args), device);
    op_.callBoxed(stack);
  }

 private:
  // The key the dispatcher would run first for these arguments, as it
  // computes it (the operator's fallthrough keys aside: a key above
  // autocast's is no autocast key either way).
  DispatchKey autocastKey(
      const IValue* args,
      const c10::impl::LocalDispatchKeySet& local) const {
    c10::DispatchKeySet keys;
    for (size_t i = 0; i < args_.size(); ++i) {
      switch (args_[i]) {
        case Arg::Other:
          break;
        case Arg::Tensor:
        case Arg::OptionalTensor:
          if (args[i].isTensor()) {
            keys = keys | args[i].toTensor().key_set();
          }
          break;
        case Arg::TensorList:
          for (const IValue& element : args[i].toListRef()) {
            keys = keys | element.toTensor().key_set();
          }
          break;
      }
    }
    return ((keys | local.included_) - local.excluded_)
        .highestPriorityTypeId();
  }

  // The dtype the kernel casts to. promote_type's: prioritize over the
  // Tensor and Tensor[] arguments in order (a Tensor? is its template's
  // "other" argument), raising where eager raises.
  at::ScalarType targetType(
      CastPolicy policy,
      DeviceType device,
      const IValue* args) const {
    if (policy == CastPolicy::Fp32) {
      return at::kFloat;
    }
    at::ScalarType current =
        at::autocast::get_lower_precision_fp_from_device_type(device);
    if (policy == CastPolicy::LowerPrecisionFp) {
      return current;
    }
    for (size_t i = 0; i < args_.size(); ++i) {
      if (args_[i] == Arg::Tensor) {
        current =
            at::autocast::prioritize(current, args[i].toTensor(), device);
      } else if (args_[i] == Arg::TensorList) {
        for (const IValue& element : args[i].toListRef()) {
          current =
              at::autocast::prioritize(current, element.toTensor(), device);
        }
      }
    }
    return current;
  }

  // cached_cast of each argument, in the order the compiler evaluates the
  // kernel's call (eagerCastsLastArgumentFirst); a cast list is a new list
  // (TorchScript lists are shared).
  void cast(IValue* args, at::ScalarType to, DeviceType device) const {
    // (the dtype first: a tensor in it already, the common case, costs
    // one comparison)
    const auto needs = [&](const at::Tensor& tensor) {
      return tensor.defined() && tensor.scalar_type() != to &&
          at::autocast::is_eligible(tensor, device);
    };
    const size_t n = args_.size();
    for (size_t k = 0; k < n; ++k) {
      const size_t i = last_first_ ? n - 1 - k : k;
      IValue& arg = args[i];
      switch (args_[i]) {
        case Arg::Other:
          break;
        case Arg::Tensor:
        case Arg::OptionalTensor:
          if (arg.isTensor() && needs(arg.toTensor())) {
            arg = at::autocast::cached_cast(to, arg.toTensor(), device);
          }
          break;
        case Arg::TensorList: {
          c10::List<at::Tensor> list = arg.toTensorList();
          bool copied = false;
          for (size_t j = 0; j < list.size(); ++j) {
            const at::Tensor element = list.get(j);
            if (!needs(element)) {
              continue;
            }
            if (!copied) {
              list = list.copy();
              copied = true;
            }
            list.set(j, at::autocast::cached_cast(to, element, device));
          }
          if (copied) {
            arg = std::move(list);
          }
          break;
        }
      }
    }
  }

  c10::OperatorHandle op_;
  std::vector<Arg> args_;
  std::vector<SmartCast> smart_casts_;
  CastPolicy cpu_ = CastPolicy::None;
  CastPolicy cuda_ = CastPolicy::None;
  bool last_first_ = true;
  // The autocast keys whose kernel for the op is plain.
  c10::DispatchKeySet plain_keys_;
};

c10::OperatorHandle operatorOf(const Node* node) {
  const std::string& op = node->s(ops::kDirectCallOp);
  const size_t dot = op.find('.');
  return c10::Dispatcher::singleton().findSchemaOrThrow(
      op.substr(0, dot).c_str(),
      dot == std::string::npos ? "" : op.substr(dot + 1).c_str());
}

Operation directCall(const Node* node) {
  const c10::OperatorHandle op = operatorOf(node);
  std::vector<Arg> args = argumentKinds(op.schema());
  TORCH_INTERNAL_ASSERT(
      !args.empty() && args.size() == node->inputs().size(),
      "jitamp::direct_call of ",
      node->s(ops::kDirectCallOp),
      " with ",
      node->inputs().size(),
      " inputs");
  std::vector<SmartCast> smart_casts;
  if (node->hasAttribute(ops::kDirectCallCastArgs)) {
    const auto& positions = node->is(ops::kDirectCallCastArgs);
    const auto& to_fp32 = node->is(ops::kDirectCallCastToFp32);
    const auto& devices = node->ss(ops::kDirectCallCastDevices);
    for (size_t i = 0; i < positions.size(); ++i) {
      smart_casts.push_back(
          {static_cast<size_t>(positions[i]), to_fp32[i] != 0, devices[i]});
    }
  }
  return DirectCall(op, std::move(args), std::move(smart_casts));
}

// Variadic: the interpreter then neither pushes an input count nor shares
// one Operation between nodes with the same number of inputs.
torch::jit::RegisterOperators directCallRegistered({torch::jit::Operator(
    ops::kDirectCall,
    directCall,
    c10::AliasAnalysisKind::CONSERVATIVE)});

} // namespace

bool canCallDirectly(const c10::FunctionSchema& schema) {
  if (argumentKinds(schema).empty()) {
    return false;
  }
  const auto op = c10::Dispatcher::singleton().findOp(
      c10::OperatorName(schema.name(), schema.overload_name()));
  if (!op) {
    return false;
  }
  const PlainPolicies policies = plainPolicies(*op);
  return policies.cpu != CastPolicy::None || policies.cuda != CastPolicy::None;
}

} // namespace jitamp
