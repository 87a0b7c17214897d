#include "passes/keep_constants_apart.h"

#include "ir/attribute_reads.h"
#include "ir/block_walk.h"
#include "ir/graph_function_state.h"

#include <ATen/ops/equal.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/api/module.h>

#include <algorithm>
#include <string>
#include <vector>

namespace jitamp {

using namespace torch::jit;

namespace {

// Whether TorchScript's constant pooling merges two tensor constants whose
// values have no complete type to tell them apart (torch/csrc/jit/ir/node_hashing.cpp's
// tensorEqual: dtype, device and layout kind, then equal values), however
// their elements are laid out.
bool pooledTogether(const at::Tensor& a, const at::Tensor& b) {
  const auto plain = [](const at::Tensor& t) {
    return t.layout() == at::kStrided && !t.is_quantized() && !t.is_nested();
  };
  return plain(a) && plain(b) && a.scalar_type() == b.scalar_type() &&
      a.device() == b.device() && a.sizes() == b.sizes() && at::equal(a, b);
}

bool sameLayout(const at::Tensor& a, const at::Tensor& b) {
  return a.strides() == b.strides() && a.storage_offset() == b.storage_offset();
}

// The tensor constants of `graph` that pooling would merge with an earlier
// one laid out otherwise.
std::vector<Node*> constantsPooledAcrossLayouts(Graph& graph) {
  const std::vector<Node*> constants =
      collectNodes(graph.block(), [](const Node* node) {
        return node->kind() == prim::Constant &&
            node->hasAttribute(attr::value) &&
            node->kindOf(attr::value) == AttributeKind::t;
      });
  std::vector<Node*> firsts; // one per class of constants pooled together
  std::vector<Node*> apart;
  for (Node* constant : constants) {
    const at::Tensor& value = constant->t(attr::value);
    const auto first =
        std::find_if(firsts.begin(), firsts.end(), [&](const Node* other) {
          return pooledTogether(other->t(attr::value), value);
        });
    if (first == firsts.end()) {
      firsts.push_back(constant);
    } else if (!sameLayout((*first)->t(attr::value), value)) {
      apart.push_back(constant);
    }
  }
  return apart;
}

} // namespace

bool KeepConstantsApartInModule(const Module& module) {
  bool changed = false;
  size_t next = 0;
  for (const Method& method : module.get_methods()) {
    Function& function = method.function();
    std::shared_ptr<Graph> graph = toGraphFunction(function).graph();
    const std::vector<Node*> apart = constantsPooledAcrossLayouts(*graph);
    if (apart.empty()) {
      continue;
    }
    TORCH_CHECK(
        !HasRun(function),
        "jitamp cannot keep the constants of '",
        function.qualname().qualifiedName(),
        "' apart: it has already run. Freeze it again, before the first call.");
    for (Node* constant : apart) {
      std::string name;
      do {
        name = "_pooled_apart_constant_" + std::to_string(next++);
      } while (module.hasattr(name));
      Value* read = nullptr;
      {
        WithInsertPoint before(constant);
        read = readModuleAttribute(
            module, *graph, name, TensorType::get(), constant->t(attr::value));
      }
      read->setType(constant->output()->type());
      read->node()->setSourceRange(constant->sourceRange());
      constant->output()->replaceAllUsesWith(read);
      constant->destroy();
    }
    changed = true;
  }
  return changed;
}

} // namespace jitamp
