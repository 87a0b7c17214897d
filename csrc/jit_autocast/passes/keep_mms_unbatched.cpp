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
  bool changed = false;
  for (const Method& method : module.get_methods()) {
    std::shared_ptr<Graph> graph = toGraphFunction(method.function()).graph();
    if (!anyNode(graph->block(), [](Node* node) {
          return node->kind() == aten::mm;
        })) {
      continue;
    }
    // Guarded already (idempotent): its top level reads the guard's flag.
    if (std::any_of(
            graph->nodes().begin(), graph->nodes().end(), [](Node* node) {
              return node->kind() == prim::GetAttr &&
                  node->s(attr::name) == kNever;
            })) {
      continue;
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
