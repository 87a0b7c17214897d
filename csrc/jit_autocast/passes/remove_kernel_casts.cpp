#include "passes/remove_kernel_casts.h"

#include "ir/jitamp_ir.h"

#include <torch/csrc/jit/ir/ir.h>

#include <unordered_set>
#include <utility>
#include <vector>

namespace jitamp {

using namespace torch::jit;

namespace {

// A value the smart cast may find to be a leaf that requires grad: a
// weight read from a module, or an argument.
bool mayBeWeight(const Value* value) {
  const Node* producer = value->node();
  return producer->kind() == prim::GetAttr ||
      (producer->kind() == prim::Param &&
       producer == value->owningGraph()->param_node());
}

// The smart casts of `block` and its nested blocks, each with whether it
// sits in a loop.
void collectCasts(
    Block* block,
    bool in_loop,
    std::vector<std::pair<Node*, bool>>& casts) {
  for (Node* node : block->nodes()) {
    for (Block* sub : node->blocks()) {
      collectCasts(sub, in_loop || node->kind() == prim::Loop, casts);
    }
    if (isSmartCast(node)) {
      casts.emplace_back(node, in_loop);
    }
  }
}

// Whether the smart cast must stay (see SimpleExecutorPlan). Every form
// but the list ones returns, in order, its first inputs.
bool keepCast(const Node* cast, bool in_loop) {
  for (size_t i = 0; i < cast->outputs().size(); ++i) {
    if (cast->output(i)->type()->kind() == c10::TypeKind::ListType ||
        (!in_loop && mayBeWeight(cast->input(i)))) {
      return true;
    }
  }
  return false;
}

// The nodes that read the cast's results (one: the op it was inserted for).
std::unordered_set<Node*> usersOf(const Node* cast) {
  std::unordered_set<Node*> users;
  for (const Value* output : cast->outputs()) {
    for (const Use& use : output->uses()) {
      users.insert(use.user);
    }
  }
  return users;
}

// Removes the smart casts that the op's own autocast kernel makes anyway
// (see SimpleExecutorPlan). An op's casts go or stay together: the kernel
// casts what is left in eager's order (the order numbers their autograd
// nodes, and so the order backward sums a value's gradients in), which a
// cast made before the op would break.
bool removeKernelCasts(Block* block) {
  bool changed = false;
  std::vector<std::pair<Node*, bool>> casts;
  collectCasts(block, /*in_loop=*/false, casts);
  std::vector<std::unordered_set<Node*>> users;
  std::unordered_set<const Node*> keep_for; // ops whose casts stay
  for (const auto& [cast, in_loop] : casts) {
    users.push_back(usersOf(cast));
    const auto& read_by = users.back();
    const bool one_op = read_by.size() == 1 && !isSmartCast(*read_by.begin());
    if (!one_op || keepCast(cast, in_loop)) {
      keep_for.insert(read_by.begin(), read_by.end());
    }
  }
  for (size_t c = 0; c < casts.size(); ++c) {
    Node* cast = casts[c].first;
    if (users[c].size() != 1 || keep_for.count(*users[c].begin()) != 0) {
      continue;
    }
    removeCast(cast);
    changed = true;
  }
  return changed;
}

} // namespace

bool RemoveKernelCasts(const std::shared_ptr<Graph>& graph) {
  return removeKernelCasts(graph->block());
}

} // namespace jitamp
