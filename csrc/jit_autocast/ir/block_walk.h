// One walk of a block: every node, nested blocks first, optionally the
// subgraphs of prim::fork / prim::awaitable nodes too.
#pragma once

#include "ir/jitamp_ir.h"

#include <torch/csrc/jit/ir/ir.h>

namespace jitamp {

enum class Subgraphs { Skip, Visit };

// Calls `visit(node)` for each node of `block`, in order, after the nodes
// of its blocks (and, with Subgraphs::Visit, of its task subgraph). The walk
// has moved past `node` before the call: `visit` may destroy it or insert
// after it (what it inserts is not visited).
template <typename Visit>
void forEachNode(
    torch::jit::Block* block,
    Visit&& visit,
    Subgraphs subgraphs = Subgraphs::Skip) {
  for (auto it = block->nodes().begin(); it != block->nodes().end();) {
    torch::jit::Node* node = *it++;
    for (torch::jit::Block* sub : node->blocks()) {
      forEachNode(sub, visit, subgraphs);
    }
    if (subgraphs == Subgraphs::Visit && hasTaskSubgraph(node)) {
      forEachNode(node->g(c10::attr::Subgraph)->block(), visit, subgraphs);
    }
    visit(node);
  }
}

// Whether `pred(node)` holds for a node of `block` or of a block within
// (with Subgraphs::Visit, of a task subgraph within too). Stops at the first.
template <typename Pred>
bool anyNode(
    torch::jit::Block* block,
    Pred&& pred,
    Subgraphs subgraphs = Subgraphs::Skip) {
  for (torch::jit::Node* node : block->nodes()) {
    if (pred(node)) {
      return true;
    }
    for (torch::jit::Block* sub : node->blocks()) {
      if (anyNode(sub, pred, subgraphs)) {
        return true;
      }
    }
    if (subgraphs == Subgraphs::Visit && hasTaskSubgraph(node) &&
        anyNode(node->g(c10::attr::Subgraph)->block(), pred, subgraphs)) {
      return true;
    }
  }
  return false;
}

} // namespace jitamp
