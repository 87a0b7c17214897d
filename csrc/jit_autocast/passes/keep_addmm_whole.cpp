#include "passes/keep_addmm_whole.h"

#include "ir/attribute_reads.h"
#include "ir/block_walk.h"
#include "ir/fold_barriers.h"
#include "ir/jitamp_ir.h"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/ir.h>

#include <optional>
#include <string>

namespace jitamp {

using namespace torch::jit;

bool KeepAddmmWhole(const std::shared_ptr<Graph>& graph, CallerRegion& region) {
  bool changed = false;
  forEachNode(graph->block(), [&](Node* node) {
    if (decomposableAddmm(node) &&
        !isFoldBarrier(node->namedInput(attr::beta)->node()) &&
        !isFoldBarrier(node->namedInput(attr::alpha)->node())) {
      insertFoldBarrier(
          node, *node->schema().argumentIndexWithName("beta"), region());
      changed = true;
    }
  });
  return changed;
}

bool KeepAddmmWholeInModule(const Module& module) {
  bool changed = false;
  for (const Method& method : module.get_methods()) {
    // Each addmm DecomposeOps would split reads its constant beta from an
    // attribute of `module` holding it.
    const std::shared_ptr<Graph> graph =
        toGraphFunction(method.function()).graph();
    forEachNode(graph->block(), [&](Node* node) {
      if (!decomposableAddmm(node)) {
        return;
      }
      Value* beta = node->namedInput(attr::beta);
      const std::optional<IValue> constant = toIValue(beta);
      if (!constant.has_value() || !toIValue(node->namedInput(attr::alpha))) {
        return; // not split: beta or alpha is computed
      }
      WithInsertPoint before(node);
      Value* read = readModuleAttribute(
          module,
          *graph,
          "_unsplit_addmm_beta_" + beta->type()->str(),
          beta->type(),
          *constant);
      read->node()->setSourceRange(node->sourceRange());
      node->replaceInput(*node->schema().argumentIndexWithName("beta"), read);
      changed = true;
    });
  }
  return changed;
}

} // namespace jitamp
