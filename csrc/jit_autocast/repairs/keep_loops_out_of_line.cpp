#include "repairs/keep_loops_out_of_line.h"

#include "ir/block_walk.h"
#include "repairs/out_of_line.h"

#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/jit_log.h>

#include <iterator>
#include <set>
#include <vector>

namespace jitamp {

using namespace torch::jit;

namespace {

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

// The carried bools of `loop` that nothing reads: the two keepOutOfLine
// gave it (each returned as the other's next value) and what unrolling made
// of them (after an even number of swaps, each returned as it came).
// A carried value qualifies where the loop's output is unread and its body
// input is read only by the body's return, as the next value of one that
// qualifies too. Returns their indices, highest first.
std::vector<size_t> inertBools(Node* loop) {
  Block* body = loop->blocks().at(0);
  const size_t carried = loop->outputs().size();
  std::set<size_t> inert;
  for (size_t i = 0; i < carried; ++i) {
    Value* param = body->inputs().at(1 + i);
    if (param->type()->kind() == c10::TypeKind::BoolType &&
        !loop->outputs().at(i)->hasUses() && param->uses().size() == 1 &&
        param->uses().front().user == body->return_node()) {
      inert.insert(i);
    }
  }
  for (bool pruned = true; pruned;) {
    pruned = false;
    for (auto it = inert.begin(); it != inert.end();) {
      Value* next = body->outputs().at(1 + *it);
      const size_t reader = body->inputs().at(1 + *it)->uses().front().offset;
      const bool closed = next->node() == body->param_node() &&
          next->offset() >= 1 && inert.count(next->offset() - 1) != 0 &&
          reader >= 1 && inert.count(reader - 1) != 0;
      it = closed ? std::next(it) : (pruned = true, inert.erase(it));
    }
  }
  return {inert.rbegin(), inert.rend()};
}

void removeCarried(Node* loop, const std::vector<size_t>& highest_first) {
  Block* body = loop->blocks().at(0);
  for (size_t i : highest_first) {
    body->eraseOutput(1 + i);
  }
  for (size_t i : highest_first) {
    body->eraseInput(1 + i);
    loop->eraseOutput(i);
    loop->removeInput(2 + i);
  }
}

} // namespace

bool KeepLoopsOutOfLineInPlan(const std::shared_ptr<Graph>& graph) {
  std::vector<Node*> loops;
  forEachNode(
      graph->block(),
      [&](Node* node) {
        if (node->kind() == c10::prim::Loop) {
          loops.push_back(node);
        }
      },
      Subgraphs::Visit);
  bool changed = false;
  // Last first: an unrolled loop's bools feed its epilogue's, which must
  // go first.
  for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
    const std::vector<size_t> inert = inertBools(*it);
    if (!inert.empty()) {
      removeCarried(*it, inert);
      changed = true;
    }
  }
  for (Node* loop : loops) {
    if (needsKeepingOutOfLine(loop)) {
      changed |= putKeepOutOfLineAfter(loop);
    }
  }
  if (changed) {
    GRAPH_DUMP("After keeping loops out of line (plan):", graph);
  }
  return changed;
}

bool KeepLoopsOutOfLine(const std::shared_ptr<Graph>& graph) {
  bool changed = false;
  forEachNode(
      graph->block(),
      [&](Node* node) {
        if (node->kind() == c10::prim::Loop && needsKeepingOutOfLine(node)) {
          // (the graph of a task subgraph's loop is the subgraph)
          keepOutOfLine(*node->owningGraph(), node);
          changed = true;
        }
      },
      Subgraphs::Visit);
  return changed;
}

} // namespace jitamp
