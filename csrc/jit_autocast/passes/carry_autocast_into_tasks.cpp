#include "passes/carry_autocast_into_tasks.h"

#include "ir/block_walk.h"
#include "ir/jitamp_ir.h"

#include <torch/csrc/jit/jit_log.h>

namespace jitamp {

using namespace torch::jit;

namespace {

bool carriesState(const Graph& task) {
  for (const Node* node : task.nodes()) {
    if (node->kind() == ops::kTaskEnter) {
      return true;
    }
  }
  return false;
}

void carryInto(Graph& graph, Node* fork) {
  Graph& task = *fork->g(attr::Subgraph);
  Value* state;
  {
    WithInsertPoint guard(fork);
    Node* capture = graph.insertNode(graph.create(ops::kTaskState, 1));
    capture->setSourceRange(fork->sourceRange());
    // Named like the first jitamp op of every rewritten graph (jitamp_ir.h):
    // it may be the first here.
    state = capture->output()
                ->setType(jitampClass("TaskTicket"))
                ->setDebugName(loadHint("autocast_state"));
  }
  fork->addInput(state);
  graph.create(ops::kTaskStarted, {state}, 0)->insertAfter(fork);

  Value* param = task.addInput("caller_autocast_state")
                     ->setType(jitampClass("TaskTicket"));
  Node* enter = task.create(ops::kTaskEnter, {param}, 1);
  enter->output()->setType(
      jitampClass("TaskAutocastGuard"));
  task.prependNode(enter);
  Node* exit = task.create(ops::kTaskExit, {enter->output()}, 0);
  exit->insertBefore(task.return_node());
  GRAPH_UPDATE("Carried the caller's autocast state into ", *fork);
}

} // namespace

bool CarryAutocastIntoTasks(const std::shared_ptr<Graph>& graph) {
  bool changed = false;
  forEachNode(graph->block(), [&](Node* node) {
    if (node->kind() == c10::prim::fork && hasTaskSubgraph(node) &&
        !carriesState(*node->g(attr::Subgraph))) {
      carryInto(*graph, node);
      changed = true;
    }
  });
  return changed;
}

} // namespace jitamp
