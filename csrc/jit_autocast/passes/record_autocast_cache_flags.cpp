#include "passes/record_autocast_cache_flags.h"

#include "ir/block_walk.h"
#include "ir/jitamp_ir.h"
#include "ops/autocast_guard.h"

#include <torch/csrc/jit/jit_log.h>

namespace jitamp {

using namespace torch::jit;

namespace {

// Whether it recorded the flag after `node`.
bool recordAfter(Graph& graph, Node* node) {
  if (node->kind() != prim::CallMethod ||
      node->s(attr::name) != "__init__" ||
      !isAutocastClass(node->input(0)->type())) {
    return false;
  }
  if (node->next()->kind() == ops::kCacheEnabled) {
    return false; // done by an earlier run
  }
  auto cls = node->input(0)->type()->expect<ClassType>();
  const auto& schema = cls->getMethod("__init__").getSchema();
  const auto index = schema.argumentIndexWithName("cache_enabled");
  if (!index || static_cast<size_t>(*index) >= node->inputs().size()) {
    return false;
  }
  if (!cls->hasAttribute(kCacheAttr)) {
    cls->addAttribute(kCacheAttr, BoolType::get());
  }
  WithInsertPoint guard(node->next());
  Node* resolve = graph.create(ops::kCacheEnabled, {node->input(*index)}, 1);
  resolve->output()->setType(BoolType::get());
  resolve->output()->setDebugName(loadHint("cache_enabled"));
  resolve->setSourceRange(node->sourceRange());
  graph.insertNode(resolve);
  Node* store =
      graph.create(prim::SetAttr, {node->input(0), resolve->output()}, 0);
  store->s_(attr::name, kCacheAttr);
  graph.insertNode(store);
  GRAPH_UPDATE("Recorded cache_enabled of ", *node);
  return true;
}

} // namespace

bool RecordAutocastCacheFlags(const std::shared_ptr<Graph>& graph) {
  bool changed = false;
  forEachNode(graph->block(), [&](Node* node) {
    changed |= recordAfter(*graph, node);
  });
  return changed;
}

} // namespace jitamp
