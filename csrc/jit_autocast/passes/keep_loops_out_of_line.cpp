#include "passes/keep_loops_out_of_line.h"

#include "ir/jitamp_ir.h"

#include <torch/csrc/jit/jit_log.h>

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

// KeepIfsOutOfLine's op: does nothing; CONSERVATIVE, so no pass removes it.
const c10::Symbol kKeepOutOfLine =
    c10::Symbol::fromQualString("jitamp::keep_out_of_line");

// Whether `node` (a loop or an if) may be emitted inline and then lose a
// value: its blocks read one in a loop that a later node of its block (or
// the block's return) reads too, or, its result returned by the graph, a
// graph input (for callers that inline it). Emitted inline, the node that
// reads its result loads its other inputs first, so the loop's read may be
// the use emitted last.
bool needsKeeping(Node* node) {
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

// Two bool values carried crosswise (each iteration returns the other's):
// neither TorchScript's dead code elimination (which keeps a carried value
// whose body input has a use) nor its constant propagation (which drops a
// value the body returns unchanged) removes them, so the loop keeps more
// than one output in every plan, optimized or not.
void keepOutOfLine(Graph& graph, Node* loop) {
  WithInsertPoint guard(loop);
  Value* unused = graph.insertConstant(false);
  Block* body = loop->blocks().at(0);
  Value* first = body->addInput("jitamp_out_of_line")->setType(c10::BoolType::get());
  Value* second = body->addInput("jitamp_out_of_line")->setType(c10::BoolType::get());
  for (Value* crosswise : {second, first}) {
    loop->addInput(unused);
    body->registerOutput(crosswise);
    loop->addOutput()->setType(c10::BoolType::get());
  }
  GRAPH_UPDATE("Gave two crosswise loop-carried values to ", *loop);
}

bool keepInBlock(Graph& graph, Block* block) {
  bool changed = false;
  for (Node* node : block->nodes()) {
    for (Block* sub : node->blocks()) {
      changed |= keepInBlock(graph, sub);
    }
    if (hasTaskSubgraph(node)) {
      changed |= KeepLoopsOutOfLine(node->g(c10::attr::Subgraph));
    }
    if (node->kind() == c10::prim::Loop && needsKeeping(node)) {
      keepOutOfLine(graph, node);
      changed = true;
    }
  }
  return changed;
}

bool keepIfsInBlock(Graph& graph, Block* block) {
  bool changed = false;
  for (Node* node : block->nodes()) {
    for (Block* sub : node->blocks()) {
      changed |= keepIfsInBlock(graph, sub);
    }
    if (node->kind() == c10::prim::If && needsKeeping(node) &&
        node->next()->kind() != kKeepOutOfLine) {
      graph.create(kKeepOutOfLine, {}, 0)->insertAfter(node);
      changed = true;
    }
  }
  return changed;
}

} // namespace

bool KeepLoopsOutOfLine(const std::shared_ptr<Graph>& graph) {
  return keepInBlock(*graph, graph->block());
}

bool KeepIfsOutOfLine(const std::shared_ptr<Graph>& graph) {
  const bool changed = keepIfsInBlock(*graph, graph->block());
  if (changed) {
    GRAPH_DUMP("After keeping ifs out of line:", graph);
  }
  return changed;
}

} // namespace jitamp
