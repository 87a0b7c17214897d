#include "repairs/out_of_line.h"

#include "ir/jitamp_ir.h"

#include <torch/csrc/jit/ir/ir.h>

#include <unordered_set>

namespace jitamp {

using namespace torch::jit;

namespace {

// The values defined outside `outer` (a loop or an if; not constants)
// that its blocks read in a loop (`in_loop`: `block` is in one): the
// interpreter moves a value out at the use it emits last, and a move in a
// loop body leaves later iterations without it. A read in an if's own
// blocks, outside any loop, runs once: moved there, nothing reads it again.
void collectOuterReads(
    Block* block,
    const Node* outer,
    bool in_loop,
    std::unordered_set<Value*>& reads) {
  const auto collect = [&](Value* value) {
    if (in_loop && value->node()->kind() != c10::prim::Constant &&
        !value->node()->isDominatedBy(outer)) {
      reads.insert(value);
    }
  };
  for (Node* node : block->nodes()) {
    for (Value* input : node->inputs()) {
      collect(input);
    }
    for (Block* sub : node->blocks()) {
      collectOuterReads(
          sub, outer, in_loop || node->kind() == c10::prim::Loop, reads);
    }
  }
  for (Value* output : block->return_node()->inputs()) {
    collect(output);
  }
}

// Whether `user` is, or is nested in, a node of `node`'s block after `node`
// (the block's return included).
bool isLaterInBlock(Node* user, Node* node) {
  Block* block = node->owningBlock();
  while (user != nullptr && user->owningBlock() != block) {
    user = user->owningBlock()->owningNode();
  }
  return user != nullptr && user != node && user->isAfter(node);
}

bool mayBeEmittedInline(Node* node) {
  return node->outputs().size() == 1 && node->output()->uses().size() == 1;
}

} // namespace

bool needsKeepingOutOfLine(Node* node) {
  if (!mayBeEmittedInline(node)) {
    return false;
  }
  std::unordered_set<Value*> reads;
  for (Block* body : node->blocks()) {
    collectOuterReads(body, node, node->kind() == c10::prim::Loop, reads);
  }
  Graph& graph = *node->owningGraph();
  const Use& result_use = node->output()->uses().front();
  const bool graph_returns_result = result_use.user == graph.return_node();
  for (Value* read : reads) {
    if (graph_returns_result && read->node() == graph.param_node()) {
      return true; // inlined into a caller, the caller's value may be read
    }
    for (const Use& use : read->uses()) {
      if (isLaterInBlock(use.user, node)) {
        return true;
      }
    }
  }
  return false;
}

bool putKeepOutOfLineAfter(Node* node) {
  static const c10::Symbol keep = ops::named("keep_out_of_line");
  if (node->next()->kind() == keep) {
    return false;
  }
  node->owningGraph()->create(keep, {}, 0)->insertAfter(node);
  return true;
}

} // namespace jitamp
