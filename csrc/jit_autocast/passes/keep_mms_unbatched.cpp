#include "passes/keep_mms_unbatched.h"

#include "ir/attribute_reads.h"
#include "ir/block_walk.h"

#include <ATen/ops/empty.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/api/module.h>

#include <algorithm>
#include <string>

namespace jitamp {

using namespace torch::jit;

bool KeepMMsUnbatchedInModule(const Module& module) {
  static const char* const kNever = "_unbatched_mm_guard";
  static const char* const kTensor = "_unbatched_mm_guard_tensor";
  const auto is_mm = [](const Node* node) { return node->kind() == aten::mm; };
  const auto reads_guard = [](const Node* node) {
    return node->kind() == prim::GetAttr && node->s(attr::name) == kNever;
  };
  bool changed = false;
  for (const Method& method : module.get_methods()) {
    std::shared_ptr<Graph> graph = toGraphFunction(method.function()).graph();
    if (!anyNode(graph->block(), is_mm) ||
        std::any_of(graph->nodes().begin(), graph->nodes().end(), reads_guard)) {
      continue; // no mm, or guarded already at its top level (idempotent)
    }
    // if self._unbatched_mm_guard: self._unbatched_mm_guard_tensor.zero_()
    WithInsertPoint at_start(graph->block()->nodes().front());
    Value* never =
        readModuleAttribute(module, *graph, kNever, BoolType::get(), false);
    Node* guard = graph->create(prim::If, {never}, /*num_outputs=*/0);
    graph->insertNode(guard);
    Block* taken = guard->addBlock();
    guard->addBlock();
    WithInsertPoint in_taken(taken);
    graph->insert(
        aten::zero_,
        {readModuleAttribute(
            module,
            *graph,
            kTensor,
            TensorType::get(),
            at::empty({0}, at::kFloat))});
    changed = true;
  }
  return changed;
}

} // namespace jitamp
