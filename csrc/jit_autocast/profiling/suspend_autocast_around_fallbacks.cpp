#include "profiling/suspend_autocast_around_fallbacks.h"

#include "ir/block_walk.h"
#include "ir/jitamp_ir.h"
#include "ops/scope_ops.h"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/jit_log.h>

#include <vector>

namespace jitamp {

using namespace torch::jit;

namespace {

// Whether the fallback's body already starts by resuming.
bool resumesFirst(const Graph& body) {
  const Node* first = body.block()->nodes().front();
  return first != body.return_node() && first->kind() == ops::kResumeAutocast;
}

// Whether the call already passes a suspension (its last input).
bool suspendsBefore(const Node* fallback) {
  return !fallback->inputs().empty() &&
      fallback->inputs().back()->node()->kind() == ops::kSuspendAutocast;
}


} // namespace

bool SuspendAutocastAroundFallbacks(const std::shared_ptr<Graph>& graph) {
  // The calls, in the graph's order (a prim::FallbackGraph has no blocks).
  std::vector<Node*> fallbacks;
  forEachNode(graph->block(), [&](Node* node) {
    if (node->kind() == prim::FallbackGraph) {
      fallbacks.push_back(node);
    }
  });
  const c10::TypePtr suspended_type = SuspendedAutocastType();
  bool changed = false;
  for (Node* fallback : fallbacks) {
    if (suspendsBefore(fallback)) {
      continue;
    }
    Graph& owner = *fallback->owningGraph();
    Node* suspend = owner.create(ops::kSuspendAutocast);
    suspend->output()->setType(suspended_type);
    suspend->insertBefore(fallback);
    fallback->addInput(suspend->output());
    // A body that two calls share gets its input and resume once.
    const std::shared_ptr<Graph> body = fallback->g(attr::Subgraph);
    if (!resumesFirst(*body)) {
      Value* token = body->addInput()->setType(suspended_type);
      body->prependNode(body->create(ops::kResumeAutocast, {token}, 0));
    }
    changed = true;
  }
  if (changed) {
    GRAPH_DUMP("After suspending autocast around fallback calls:", graph);
  }
  return changed;
}

} // namespace jitamp
