#include "profiling/ignore_amp_in_fallbacks.h"

#include "ir/block_walk.h"
#include "ir/graph_function_state.h"
#include "ir/jitamp_ir.h"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/jit_log.h>
#include <torch/csrc/jit/runtime/custom_operator.h>
#include <torch/csrc/jit/runtime/operator.h>

#include <vector>

namespace jitamp {

using namespace torch::jit;

namespace {

// The fallback functions a plan calls: constants the profiling executor
// marks `fallback` (insertFallbackFunctionCall), in every block and in the
// forward graphs of differentiable subgraphs.
void collectFallbackFunctions(
    Block* block,
    std::vector<GraphFunction*>& found) {
  static const c10::Symbol kFallback = c10::Symbol::attr("fallback");
  for (Node* node : block->nodes()) {
    if (node->kind() == prim::Constant && node->hasAttribute(kFallback)) {
      if (const auto type = node->output()->type()->cast<FunctionType>()) {
        if (GraphFunction* function = tryToGraphFunction(*type->function())) {
          found.push_back(function);
        }
      }
    }
    for (Block* inner : node->blocks()) {
      collectFallbackFunctions(inner, found);
    }
    if (node->hasAttribute(attr::Subgraph) &&
        node->kindOf(attr::Subgraph) == AttributeKind::g) {
      collectFallbackFunctions(node->g(attr::Subgraph)->block(), found);
    }
  }
}

bool startsWithTheOp(const Graph& graph) {
  const Node* first = graph.block()->nodes().front();
  return first != graph.return_node() &&
      first->kind() == ops::kIgnoreAmpInFallbacks;
}

void prependOnce(Graph& graph) {
  if (!startsWithTheOp(graph)) {
    graph.prependNode(graph.create(ops::kIgnoreAmpInFallbacks, 0));
  }
}

// The op's work, when the interpreter compiles the plan holding `node`:
// each fallback `ignore_amp`, and the op first in every graph its later
// plans are made from, so that those plans mark their own fallbacks in
// turn. Its own graph is not enough: TorchScript makes a fallback's
// executor as it makes the fallback and has it begin profiling at once,
// from the graph as it was before this mark (fuzz seed 281209, index
// 28386).
Operation ignoreAmpInFallbacks(const Node* node) {
  std::vector<GraphFunction*> functions;
  // (read only: the graphs changed are the fallbacks', not this one)
  collectFallbackFunctions(
      const_cast<Graph*>(node->owningGraph())->block(), functions);
  for (GraphFunction* function : functions) {
    function->_set_ignore_amp(true);
    prependOnce(*function->graph());
    for (const std::shared_ptr<Graph>& graph : startingGraphs(*function)) {
      prependOnce(*graph);
    }
  }
  return [](Stack&) {};
}

RegisterOperators registered({Operator(
    "jitamp::ignore_amp_in_fallbacks() -> ()",
    ignoreAmpInFallbacks,
    c10::AliasAnalysisKind::CONSERVATIVE)});

} // namespace

bool IgnoreAmpInFallbacks(const std::shared_ptr<Graph>& plan) {
  if (startsWithTheOp(*plan)) {
    return false;
  }
  forEachNode(plan->block(), [](Node* node) { // inlined callees' copies
    if (node->kind() == ops::kIgnoreAmpInFallbacks) {
      node->destroy();
    }
  });
  plan->prependNode(plan->create(ops::kIgnoreAmpInFallbacks, 0));
  return true;
}

} // namespace jitamp
