#include "repairs/repair_value_scopes.h"

#include <torch/csrc/jit/ir/ir.h>

#include <map>
#include <utility>
#include <vector>

namespace jitamp {

using namespace torch::jit;

namespace {

// Whether `inner` is `outer` or nested in it.
bool within(const Block* inner, const Block* outer) {
  for (const Block* block = inner; block != nullptr;
       block = block->owningNode() ? block->owningNode()->owningBlock()
                                   : nullptr) {
    if (block == outer) {
      return true;
    }
  }
  return false;
}

struct Repair {
  Graph& graph;
  // (value, block it is wanted in) -> the value there
  std::map<std::pair<Value*, Block*>, Value*> routed;

  // `value` made available in the block that holds the node owning `from`
  // (an output of that prim::If).
  Value* outOf(Value* value, Block* from) {
    Node* owner = from->owningNode();
    TORCH_CHECK(
        owner != nullptr && owner->kind() == prim::If,
        "jitamp: the graph uses %",
        value->debugName(),
        " outside the ",
        owner ? owner->kind().toQualString() : "graph",
        " that defines it; jitamp cannot rewrite it. Script the module with "
        "jitamp enabled (jitamp.enable() before torch.jit.script).");
    const auto key = std::make_pair(value, owner->owningBlock());
    if (auto found = routed.find(key); found != routed.end()) {
      return found->second;
    }
    Value* inner = at(value, from);
    Value* out = owner->addOutput()->setType(value->type());
    for (Block* branch : owner->blocks()) {
      if (branch == from) {
        branch->registerOutput(inner);
      } else {
        Node* none = graph.createUninitialized(value->type());
        branch->appendNode(none);
        branch->registerOutput(none->output());
      }
    }
    routed.emplace(key, out);
    return out;
  }

  // `value` in `block`, where `block` is the block defining it or one that
  // encloses that block (the value routed out as far as `block`).
  Value* at(Value* value, Block* block) {
    Block* defined = value->node()->owningBlock();
    if (defined == block) {
      return value;
    }
    // the block directly inside `block` on the way down to `defined`
    Block* child = defined;
    while (child->owningNode()->owningBlock() != block) {
      child = child->owningNode()->owningBlock();
    }
    return outOf(value, child);
  }

  // The nearest block enclosing both.
  static Block* common(Block* a, Block* b) {
    for (Block* block = a; block != nullptr;
         block = block->owningNode() ? block->owningNode()->owningBlock()
                                     : nullptr) {
      if (within(b, block)) {
        return block;
      }
    }
    return nullptr;
  }

  bool run(Block* block) {
    bool changed = false;
    for (Node* node : block->nodes()) {
      for (Block* sub : node->blocks()) {
        changed |= run(sub);
      }
      for (size_t i = 0; i < node->inputs().size(); ++i) {
        Value* value = node->input(i);
        if (within(block, value->node()->owningBlock())) {
          continue;
        }
        node->replaceInput(
            i, at(value, common(value->node()->owningBlock(), block)));
        changed = true;
      }
    }
    for (size_t i = 0; i < block->outputs().size(); ++i) {
      Value* value = block->outputs()[i];
      if (!within(block, value->node()->owningBlock())) {
        block->replaceOutput(
            i, at(value, common(value->node()->owningBlock(), block)));
        changed = true;
      }
    }
    return changed;
  }
};

} // namespace

bool RepairValueScopes(const std::shared_ptr<Graph>& graph) {
  Repair repair{*graph, {}};
  return repair.run(graph->block());
}

} // namespace jitamp
