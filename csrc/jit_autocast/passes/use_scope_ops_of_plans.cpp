#include "passes/use_scope_ops_of_plans.h"

#include "ir/block_walk.h"
#include "ir/jitamp_ir.h"
#include "ops/scope_ops.h"
#include "passes/explicit_scopes_for_export.h"

#include <torch/csrc/jit/ir/ir.h>

#include <unordered_map>
#include <vector>

namespace jitamp {

using namespace torch::jit;

namespace {

// Replaces each node of a kind in `renamed` with one of the kind it maps to
// (same inputs, outputs, attributes and source). Returns whether it
// replaced one.
bool renameScopeOps(
    Graph& graph,
    const std::unordered_map<Symbol, Symbol>& renamed) {
  bool changed = false;
  forEachNode(
      graph.block(),
      [&](Node* node) {
        const auto found = renamed.find(node->kind());
        if (found == renamed.end()) {
          return;
        }
        Node* in_plan = node->owningGraph()->create(
            found->second, node->inputs(), node->outputs().size());
        in_plan->copyMetadata(node)->copyAttributes(*node)->insertBefore(node);
        for (size_t i = 0; i < node->outputs().size(); ++i) {
          in_plan->output(i)->copyMetadata(node->output(i));
        }
        node->replaceAllUsesWith(in_plan);
        node->destroy();
        changed = true;
      },
      Subgraphs::Visit);
  return changed;
}

} // namespace

bool UseScopeOpsOfPlans(const std::shared_ptr<Graph>& plan) {
  bool changed = renameScopeOps(*plan, scopeOpsInPlans());
  // An enter of an object made for it alone takes the object's values
  // instead: the object's creation and attribute writes cost more than
  // the enter itself.
  const std::vector<Node*> enters = collectNodes(
      plan->block(),
      [](const Node* node) {
        return node->kind() == ops::kEnterInPlan && node->inputs().size() == 1;
      },
      Subgraphs::Visit);
  for (Node* enter : enters) {
    changed |= EnterWithArguments(enter, /*in_plan=*/true);
  }
  return changed;
}

bool CallerRegionsAsConstants(const std::shared_ptr<Graph>& plan) {
  bool changed = false;
  forEachNode(plan->block(), [&](Node* node) {
    if (node->kind() != ops::kCallerRegionInPlan) {
      return;
    }
    if (node->output()->hasUses()) {
      WithInsertPoint here(node);
      node->output()->replaceAllUsesWith(
          plan->insertConstant(autocastCallerRegion()));
    }
    node->destroy();
    changed = true;
  });
  return changed;
}

bool UseScopeOpsAsSaved(const std::shared_ptr<Graph>& graph) {
  static const std::unordered_map<Symbol, Symbol> as_saved = [] {
    std::unordered_map<Symbol, Symbol> inverse;
    for (const auto& [saved, in_plan] : scopeOpsInPlans()) {
      inverse.emplace(in_plan, saved);
    }
    return inverse;
  }();
  return renameScopeOps(*graph, as_saved);
}

} // namespace jitamp
