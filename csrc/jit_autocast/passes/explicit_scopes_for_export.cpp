#include "passes/explicit_scopes_for_export.h"

#include "ir/block_walk.h"
#include "ir/jitamp_ir.h"
#include "ir/static_scopes.h"

#include <torch/csrc/jit/ir/ir.h>

#include <vector>

namespace jitamp {

using namespace torch::jit;

namespace {

bool isCastOrBarrier(const Node* node) {
  return isSmartCast(node) || node->kind() == ops::kDependent ||
      node->kind() == ops::kToFp16BeforeLoop;
}

// The cache_enabled of the object's scope: in a plan, the flag set on the
// object (jitamp::autocast_cache_enabled's result, evaluated where the
// object was made, as eager's __init__ does); for export, what the source
// passed (that op's input). None where neither is there.
Value* cacheArgument(Value* object, Graph& graph, bool in_plan) {
  Value* recorded = static_scopes_detail::setOnce(
      object, "_jitamp_cache_enabled", object->node()->owningBlock());
  if (recorded != nullptr && in_plan) {
    return recorded;
  }
  if (recorded != nullptr && recorded->node()->kind() == ops::kCacheEnabled) {
    return recorded->node()->input(0);
  }
  return graph.insertNode(graph.createNone())->output();
}

} // namespace

bool EnterWithArguments(Node* enter, bool in_plan) {
  const auto args = static_scopes_detail::enterArgs(enter);
  if (args.device == nullptr || args.dtype == nullptr ||
      args.enabled == nullptr) {
    return false;
  }
  Value* object = enter->input(0);
  for (const Use& use : object->uses()) {
    if (use.user->kind() == prim::SetAttr && !use.user->isBefore(enter)) {
      return false; // (set after it: no scripted autocast does that)
    }
  }
  Graph& graph = *enter->owningGraph();
  WithInsertPoint before(enter);
  Value* cache = cacheArgument(object, graph, in_plan);
  Node* with_args = graph.insertNode(graph.create(
      enter->kind(), {args.device, args.dtype, args.enabled, cache}, 2));
  if (in_plan) {
    with_args->copyMetadata(enter); // its errors name what they named
  } else {
    with_args->setSourceRange(object->node()->sourceRange());
  }
  for (size_t i = 0; i < 2; ++i) {
    with_args->output(i)->setType(enter->output(i)->type());
    enter->output(i)->replaceAllUsesWith(with_args->output(i));
  }
  enter->destroy();

  // Reads of the object read what it was set to; then it goes, with what
  // only it read, if nothing else uses it.
  std::vector<Node*> setters;
  bool escapes = false;
  for (const Use& use : object->uses()) {
    Node* user = use.user;
    if (user->kind() == prim::GetAttr) {
      if (Value* value = static_scopes_detail::setOnce(
              object, user->s(attr::name).c_str(),
              object->node()->owningBlock())) {
        user->output()->replaceAllUsesWith(value);
        continue;
      }
      escapes = true;
    } else if (user->kind() == prim::SetAttr) {
      setters.push_back(user);
    } else {
      escapes = true;
    }
  }
  std::vector<Node*> unread;
  for (const Use& use : object->uses()) {
    if (use.user->kind() == prim::GetAttr && !use.user->output()->hasUses()) {
      unread.push_back(use.user);
    }
  }
  for (Node* read : unread) {
    read->destroy();
  }
  if (escapes || object->uses().size() != setters.size()) {
    return true;
  }
  for (Node* setter : setters) {
    Node* value = setter->input(1)->node();
    setter->destroy();
    if (value->kind() == ops::kCacheEnabled && !value->output()->hasUses()) {
      value->destroy();
    }
  }
  object->node()->destroy();
  // In a plan, a flag read right before the enter is the one the enter
  // reads itself (autocastCacheEnabled): one op fewer.
  Node* flag = with_args->input(3)->node();
  if (in_plan && flag->kind() == ops::kCacheEnabled &&
      flag->next() == with_args && flag->output()->uses().size() == 1) {
    with_args->replaceInput(3, flag->input(0));
    flag->destroy();
  }
  return true;
}

bool ExplicitScopesForExport(const std::shared_ptr<Graph>& graph) {
  bool changed = false;
  std::vector<Node*> enters;
  std::vector<Node*> tokens;
  forEachNode(graph->block(), [&](Node* node) {
    if (isCastOrBarrier(node)) {
      removeCast(node);
      changed = true;
    } else if (node->kind() == ops::kEnter && node->inputs().size() == 1) {
      enters.push_back(node);
    } else if (node->kind() == ops::kCallerRegion) {
      tokens.push_back(node);
    }
  });
  for (Node* enter : enters) {
    changed |= EnterWithArguments(enter, /*in_plan=*/false);
  }
  for (Node* token : tokens) {
    if (!token->output()->hasUses()) {
      token->destroy();
      changed = true;
    }
  }
  return changed;
}

} // namespace jitamp
