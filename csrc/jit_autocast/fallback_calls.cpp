#include "fallback_calls.h"

#include "jitamp_ir.h"
#include "scope_ops.h"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/jit_log.h>
#include <torch/csrc/jit/passes/pass_manager.h>
#include <torch/csrc/jit/runtime/custom_operator.h>
#include <torch/csrc/jit/runtime/operator.h>

#include <vector>

namespace jitamp {

using namespace torch::jit;

namespace {

void collectFallbacks(Block* block, std::vector<Node*>& found) {
  for (Node* node : block->nodes()) {
    if (node->kind() == prim::FallbackGraph) {
      found.push_back(node);
    }
    for (Block* inner : node->blocks()) {
      collectFallbacks(inner, found);
    }
  }
}

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

void runOnEveryPlan(std::shared_ptr<Graph>& graph) {
  SuspendAutocastAroundFallbacks(graph);
}

const GraphPassNameType kRegistered = registerPostPass(runOnEveryPlan);

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

// The op's work, when the interpreter compiles the plan holding `node`.
Operation ignoreAmpInFallbacks(const Node* node) {
  std::vector<GraphFunction*> functions;
  // (read only: the graphs changed are the fallbacks', not this one)
  collectFallbackFunctions(
      const_cast<Graph*>(node->owningGraph())->block(), functions);
  for (GraphFunction* function : functions) {
    function->_set_ignore_amp(true);
    // Its graph may start with the op already: another copy of the op in
    // this plan got there first, or the graph is a copy of code that had it.
    Graph& graph = *function->graph();
    if (!startsWithTheOp(graph)) {
      graph.prependNode(graph.create(ops::kIgnoreAmpInFallbacks, 0));
    }
  }
  return [](Stack&) {};
}

RegisterOperators registered({Operator(
    "jitamp::ignore_amp_in_fallbacks() -> ()",
    ignoreAmpInFallbacks,
    c10::AliasAnalysisKind::CONSERVATIVE)});

void removeTheOp(Block* block) {
  for (auto it = block->nodes().begin(); it != block->nodes().end();) {
    Node* node = *it;
    ++it;
    for (Block* inner : node->blocks()) {
      removeTheOp(inner);
    }
    if (node->kind() == ops::kIgnoreAmpInFallbacks) {
      node->destroy();
    }
  }
}

} // namespace

bool SuspendAutocastAroundFallbacks(const std::shared_ptr<Graph>& graph) {
  std::vector<Node*> fallbacks;
  collectFallbacks(graph->block(), fallbacks);
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

bool IgnoreAmpInFallbacks(const std::shared_ptr<Graph>& plan) {
  if (startsWithTheOp(*plan)) {
    return false;
  }
  removeTheOp(plan->block()); // inlined callees' copies
  plan->prependNode(plan->create(ops::kIgnoreAmpInFallbacks, 0));
  return true;
}

} // namespace jitamp
