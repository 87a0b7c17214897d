#include "passes/peephole_keeping_transposes.h"

#include "ir/block_walk.h"
#include "ir/jitamp_ir.h"

#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/peephole.h>

#include <vector>

namespace jitamp {

using namespace torch::jit;

namespace {

// Marks the aten::alias nodes this pass puts between two transposes, so that
// it removes those and only those (the graph may have aten::alias of its own).
const Symbol kKeptView = Symbol::attr("jitamp_kept_view");

// aten::t has one overload, the one the peephole pass folds.
bool isTranspose(const Node* node) {
  return node->kind() == aten::t;
}

// Puts an aten::alias between every aten::t and the aten::t that reads it,
// anywhere in the graph (the peephole pass folds across blocks): one per
// inner transpose, right after it, read by its outer transposes only.
void guardTransposePairs(Block* block) {
  forEachNode(block, [](Node* node) {
    if (!isTranspose(node)) {
      return;
    }
    Node* guard = nullptr;
    const std::vector<Use> uses = node->output()->uses(); // edited below
    for (const Use& use : uses) {
      if (!isTranspose(use.user)) {
        continue;
      }
      if (guard == nullptr) {
        guard = node->owningGraph()->create(aten::alias, {node->output()});
        guard->output()->setType(node->output()->type());
        guard->i_(kKeptView, 1);
        guard->insertAfter(node);
      }
      use.user->replaceInput(use.offset, guard->output());
    }
  });
}

void removeGuards(Block* block) {
  forEachNode(block, [](Node* node) {
    if (node->kind() == aten::alias && node->hasAttribute(kKeptView)) {
      node->output()->replaceAllUsesWith(node->input());
      node->destroy();
    }
  });
}

} // namespace

bool PeepholeKeepingTransposes(const std::shared_ptr<Graph>& graph) {
  guardTransposePairs(graph->block());
  const bool changed =
      PeepholeOptimize(graph, /*disable_shape_peepholes=*/true);
  removeGuards(graph->block());
  return changed;
}

} // namespace jitamp
