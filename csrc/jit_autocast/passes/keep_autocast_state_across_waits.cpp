#include "passes/keep_autocast_state_across_waits.h"

#include "ir/block_walk.h"
#include "ir/jitamp_ir.h"

#include <torch/csrc/jit/jit_log.h>

namespace jitamp {

using namespace torch::jit;

namespace {

bool prepared(const Node* wait) {
  const Node* before = wait->prev();
  return before->kind() == ops::kWaitPrepare &&
      before->input() == wait->input();
}

void prepare(Graph& graph, Node* wait) {
  Node* lent = graph.create(ops::kWaitPrepare, {wait->input()}, 1);
  lent->output()->setType(
      c10::OptionalType::create(jitampClass("TaskAutocastGuard")));
  lent->setSourceRange(wait->sourceRange());
  lent->insertBefore(wait);
  Node* resume = graph.create(ops::kWaitResume, {lent->output()}, 0);
  resume->setSourceRange(wait->sourceRange());
  resume->insertAfter(wait);
  GRAPH_UPDATE("Kept the autocast state across ", *wait);
}

} // namespace

bool KeepAutocastStateAcrossWaits(const std::shared_ptr<Graph>& graph) {
  bool changed = false;
  forEachNode(graph->block(), [&](Node* node) {
    if (node->kind() == aten::wait && !prepared(node)) {
      prepare(*graph, node);
      changed = true;
    }
  });
  return changed;
}

} // namespace jitamp
