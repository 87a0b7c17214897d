#include "repairs/restore_exits_cut_by_raises.h"

#include "ir/block_walk.h"
#include "ir/jitamp_ir.h"

#include <torch/csrc/jit/ir/ir.h>

#include <unordered_map>
#include <vector>

namespace jitamp {

using namespace torch::jit;

bool RestoreExitsCutByRaises(const std::shared_ptr<Graph>& graph) {
  // Per block, its enters without an exit, in program order.
  std::unordered_map<Block*, std::vector<Node*>> open;
  std::vector<Block*> order;
  forEachNode(
      graph->block(),
      [&](Node* node) {
        if (isEnter(node) && !node->output(0)->hasUses()) {
          auto& enters = open[node->owningBlock()];
          if (enters.empty()) {
            order.push_back(node->owningBlock());
          }
          enters.push_back(node);
        }
      },
      Subgraphs::Visit);
  for (Block* block : order) {
    const auto& enters = open[block];
    for (auto it = enters.rbegin(); it != enters.rend(); ++it) {
      Node* exit = block->owningGraph()->create(ops::kExit, {(*it)->output(0)}, 0);
      exit->setSourceRange((*it)->sourceRange());
      exit->insertBefore(block->return_node());
    }
  }
  return !order.empty();
}

} // namespace jitamp
