#include "ir/op_casts.h"

#include "ir/jitamp_ir.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <c10/core/InferenceMode.h>
#include <torch/csrc/autograd/function.h>

#include <torch/csrc/jit/jit_log.h>

#include <algorithm>

namespace jitamp {

using namespace torch::jit;

namespace {

// See eagerCastsLastArgumentFirst (op_casts.h).
bool probeEagerCastOrder() {
  const bool was_enabled = at::autocast::is_autocast_enabled(c10::DeviceType::CPU);
  const at::ScalarType was_dtype =
      at::autocast::get_autocast_dtype(c10::DeviceType::CPU);
  const bool cache_was_enabled = at::autocast::is_autocast_cache_enabled();
  at::autocast::set_autocast_enabled(c10::DeviceType::CPU, true);
  at::autocast::set_autocast_dtype(c10::DeviceType::CPU, at::kBFloat16);
  at::autocast::set_autocast_cache_enabled(false);
  at::Tensor out;
  {
    c10::InferenceMode not_inference(false);
    at::AutoGradMode grad(true);
    const at::Tensor a = at::ones({1, 1}, at::kFloat).set_requires_grad(true);
    const at::Tensor b = at::ones({1, 1}, at::kFloat).set_requires_grad(true);
    out = at::mm(a, b);
  }
  at::autocast::set_autocast_enabled(c10::DeviceType::CPU, was_enabled);
  at::autocast::set_autocast_dtype(c10::DeviceType::CPU, was_dtype);
  at::autocast::set_autocast_cache_enabled(cache_was_enabled);
  // Where the probe saw no casts (autocast dispatch excluded around it),
  // the answer of GCC, which builds torch's Linux wheels.
  const auto& mm = out.grad_fn();
  const auto cast = [&](size_t i) -> const torch::autograd::Node* {
    if (mm == nullptr || mm->num_outputs() <= i) {
      return nullptr;
    }
    const auto& fn = mm->next_edge(i).function;
    return fn != nullptr && fn->name().rfind("ToCopyBackward", 0) == 0
        ? fn.get()
        : nullptr;
  };
  if (cast(0) == nullptr || cast(1) == nullptr) {
    return true;
  }
  return cast(0)->sequence_nr() > cast(1)->sequence_nr();
}

// overrideCastOrderForTesting: -1 none, 0 first argument first, 1 last.
int cast_order_override = -1;

// Whether InsertSmartCasts, given `policy`, casts input `index` by `kind`
// for `devices`.
bool madeByPolicy(
    const EffectivePolicy& policy,
    size_t index,
    Symbol kind,
    const std::string& devices) {
  const auto makes = [&](CastPolicy applied) {
    switch (applied) {
      case CastPolicy::LowerPrecisionFp:
        return kind == ops::kToFp16;
      case CastPolicy::Fp32:
        return kind == ops::kToFp32;
      case CastPolicy::Fp32AppendDtype:
      case CastPolicy::Fp32SetOptDtype:
        return kind == ops::kToFp32 && index == 0;
      case CastPolicy::Promote:
        return kind == ops::kPromote;
      case CastPolicy::None:
      case CastPolicy::Banned:
        return false;
    }
    return false;
  };
  for (const auto& [named, applied] : castGroupsOf(policy)) {
    if (devices == named && makes(applied)) {
      return true;
    }
  }
  return false;
}

} // namespace

CastGroups castGroupsOf(const EffectivePolicy& policy) {
  if (policy.cpu == policy.cuda) {
    return {{"cpu,cuda", policy.cpu}};
  }
  return {{"cpu", policy.cpu}, {"cuda", policy.cuda}};
}

std::string devicesOf(const Node* cast) {
  for (const Value* input : cast->inputs()) {
    if (input->type()->kind() == TypeKind::StringType) {
      if (auto value = toIValue(input)) {
        return value->toStringRef();
      }
    }
  }
  return "";
}

bool eagerCastsLastArgumentFirst() {
  static const bool last_first = probeEagerCastOrder();
  return last_first;
}

bool castsLastArgumentFirst() {
  return cast_order_override < 0 ? eagerCastsLastArgumentFirst()
                                 : cast_order_override == 1;
}

void overrideCastOrderForTesting(std::optional<bool> last_first) {
  cast_order_override = last_first ? static_cast<int>(*last_first) : -1;
}

bool dropCastsThisTorchDoesNotMake(
    Node* node,
    const FunctionSchema& schema,
    const EffectivePolicy& policy) {
  if (!inPolicyTable(schema.name(), schema.overload_name())) {
    return false;
  }
  bool changed = false;
  for (size_t i = 0; i < node->inputs().size(); ++i) {
    bool stale = false;
    Value* source = node->input(i);
    while (isSmartCast(source->node())) {
      const Node* cast = source->node();
      stale = stale || !madeByPolicy(policy, i, cast->kind(), devicesOf(cast));
      source = cast->input(source->offset());
    }
    if (!stale) {
      continue;
    }
    Value* was = node->input(i);
    GRAPH_UPDATE("Reading ", source->debugName(), " uncast in ", *node,
                 ": this torch's policy does not make its casts");
    node->replaceInput(i, source);
    // The casts nothing reads now, from the one the op read.
    while (isSmartCast(was->node()) && !was->node()->hasUses()) {
      Node* cast = was->node();
      was = cast->input(was->offset());
      cast->destroy();
    }
    changed = true;
  }
  return changed;
}

bool putCastsInThisTorchsOrder(
    Node* node,
    const FunctionSchema& schema,
    const EffectivePolicy& policy) {
  struct Placed {
    Node* cast;
    size_t key;
  };
  const auto groups = castGroupsOf(policy);
  const size_t n =
      std::min(node->inputs().size(), schema.arguments().size());
  const bool last_first = castsLastArgumentFirst();
  c10::SmallVector<Placed, 8> casts;
  for (size_t i = 0; i < n; ++i) {
    const size_t position = last_first ? n - 1 - i : i;
    for (Value* value = node->input(i); isSmartCast(value->node());
         value = value->node()->input(value->offset())) {
      Node* cast = value->node();
      if (cast->kind() != ops::kToFp16 && cast->kind() != ops::kToFp32) {
        return false;
      }
      const std::string devices = devicesOf(cast);
      const auto group = std::find_if(
          groups.begin(), groups.end(), [&](const auto& entry) {
            return devices == entry.first;
          });
      if (group == groups.end()) {
        return false;
      }
      const size_t key = static_cast<size_t>(group - groups.begin()) * n +
          position;
      const auto seen =
          std::find_if(casts.begin(), casts.end(), [&](const Placed& p) {
            return p.cast == cast;
          });
      if (seen == casts.end()) {
        casts.push_back({cast, key});
      } else {
        seen->key = std::min(seen->key, key); // one cast, read twice
      }
    }
  }
  if (casts.size() < 2) {
    return false;
  }
  // Together, just before the op: nothing else runs between them.
  c10::SmallVector<Node*, 8> current;
  for (Node* prev = node->prev(); current.size() < casts.size();
       prev = prev->prev()) {
    const bool ours =
        std::any_of(casts.begin(), casts.end(), [&](const Placed& p) {
          return p.cast == prev;
        });
    if (!ours) {
      return false;
    }
    current.insert(current.begin(), prev);
  }
  std::stable_sort(
      casts.begin(), casts.end(), [](const Placed& a, const Placed& b) {
        return a.key < b.key;
      });
  bool same = true;
  for (size_t k = 0; k < casts.size(); ++k) {
    same = same && casts[k].cast == current[k];
    // A cast stacked on another must stay after it.
    for (size_t later = k + 1; later < casts.size(); ++later) {
      for (const Value* input : casts[k].cast->inputs()) {
        if (input->node() == casts[later].cast) {
          return false;
        }
      }
    }
  }
  if (same) {
    return false;
  }
  for (const Placed& placed : casts) {
    placed.cast->moveBefore(node);
  }
  GRAPH_UPDATE("Put the casts of ", *node, " in this torch's order");
  return true;
}

} // namespace jitamp
