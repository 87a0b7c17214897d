#include "passes/make_waits_blocking.h"

#include "ir/jitamp_ir.h"

#include <torch/csrc/jit/jit_log.h>

namespace jitamp {

using namespace torch::jit;

namespace {

bool replaceInBlock(Graph& graph, Block* block) {
  bool changed = false;
  for (auto it = block->nodes().begin(); it != block->nodes().end();) {
    Node* node = *it;
    ++it; // the node is destroyed below
    for (Block* sub : node->blocks()) {
      changed |= replaceInBlock(graph, sub);
    }
    if (node->kind() != aten::wait) {
      continue;
    }
    WithInsertPoint guard(node);
    Node* wait = graph.create(ops::kWait, {node->input()}, 1);
    wait->output()->setType(node->output()->type());
    wait->setSourceRange(node->sourceRange());
    graph.insertNode(wait);
    node->output()->replaceAllUsesWith(wait->output());
    GRAPH_UPDATE("Replaced ", *node, " with ", *wait);
    node->destroy();
    changed = true;
  }
  return changed;
}

} // namespace

bool MakeWaitsBlocking(const std::shared_ptr<Graph>& graph) {
  return replaceInBlock(*graph, graph->block());
}

} // namespace jitamp
