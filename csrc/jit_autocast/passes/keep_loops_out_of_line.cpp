#include "passes/keep_loops_out_of_line.h"

#include "ir/block_walk.h"
#include "ir/out_of_line.h"

#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/jit_log.h>

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

} // namespace

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
