#include "passes/make_waits_blocking.h"

#include "ir/block_walk.h"
#include "ir/jitamp_ir.h"

#include <torch/csrc/jit/jit_log.h>

namespace jitamp {

using namespace torch::jit;

namespace {

// Replaces `node`, an aten::wait, with jitamp::wait.
void replaceWait(Graph& graph, Node* node) {
  WithInsertPoint guard(node);
  Node* wait = graph.create(ops::kWait, {node->input()}, 1);
  wait->output()->setType(node->output()->type());
  wait->setSourceRange(node->sourceRange());
  graph.insertNode(wait);
  node->output()->replaceAllUsesWith(wait->output());
  GRAPH_UPDATE("Replaced ", *node, " with ", *wait);
  node->destroy();
}

} // namespace

bool MakeWaitsBlocking(const std::shared_ptr<Graph>& graph) {
  bool changed = false;
  forEachNode(graph->block(), [&](Node* node) {
    if (node->kind() == aten::wait) {
      replaceWait(*graph, node);
      changed = true;
    }
  });
  return changed;
}

} // namespace jitamp
