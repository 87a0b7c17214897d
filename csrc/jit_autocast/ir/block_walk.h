// One walk of a block: every node, nested blocks first, optionally the
// subgraphs of prim::fork / prim::awaitable nodes too; and one of a module's
// methods.
#pragma once

#include "ir/jitamp_ir.h"

#include <torch/csrc/jit/ir/ir.h>

#include <vector>

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

// The nodes of `block` and the blocks within (with Subgraphs::Visit, of the
// task subgraphs within too) that `wanted(node)` picks, in forEachNode's
// order.
template <typename Wanted>
std::vector<torch::jit::Node*> collectNodes(
    torch::jit::Block* block,
    Wanted&& wanted,
    Subgraphs subgraphs = Subgraphs::Skip) {
  std::vector<torch::jit::Node*> out;
  forEachNode(
      block,
      [&](torch::jit::Node* node) {
        if (wanted(node)) {
          out.push_back(node);
        }
      },
      subgraphs);
  return out;
}

// Calls `visit(method)` for each method of `module` (a torch::jit::Module;
// the caller includes torch/csrc/jit/api/module.h), then of its submodules.
template <typename ModuleT, typename Visit>
void forEachMethod(const ModuleT& module, Visit&& visit) {
  for (torch::jit::Function* method : module.type()->methods()) {
    visit(*method);
  }
  for (const ModuleT& child : module.children()) {
    forEachMethod(child, visit);
  }
}

} // namespace jitamp
