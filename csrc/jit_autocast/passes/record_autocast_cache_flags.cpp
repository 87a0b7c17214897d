#include "passes/record_autocast_cache_flags.h"

#include "ir/jitamp_ir.h"
#include "ops/autocast_guard.h"

#include <torch/csrc/jit/jit_log.h>

namespace jitamp {

using namespace torch::jit;

namespace {

bool recordInBlock(Graph& graph, Block* block) {
  bool changed = false;
  for (Node* node : block->nodes()) {
    for (Block* sub : node->blocks()) {
      changed |= recordInBlock(graph, sub);
    }
    if (node->kind() != prim::CallMethod ||
        node->s(attr::name) != "__init__" ||
        !isAutocastClass(node->input(0)->type())) {
      continue;
    }
    if (node->next()->kind() == ops::kCacheEnabled) {
      continue; // done by an earlier run
    }
    auto cls = node->input(0)->type()->expect<ClassType>();
    const auto& schema = cls->getMethod("__init__").getSchema();
    const auto index = schema.argumentIndexWithName("cache_enabled");
    if (!index || static_cast<size_t>(*index) >= node->inputs().size()) {
      continue;
    }
    if (!cls->hasAttribute(kCacheAttr)) {
      cls->addAttribute(kCacheAttr, BoolType::get());
    }
    WithInsertPoint guard(node->next());
    Node* resolve =
        graph.create(ops::kCacheEnabled, {node->input(*index)}, 1);
    resolve->output()->setType(BoolType::get());
    resolve->output()->setDebugName(loadHint("cache_enabled"));
    resolve->setSourceRange(node->sourceRange());
    graph.insertNode(resolve);
    Node* store =
        graph.create(prim::SetAttr, {node->input(0), resolve->output()}, 0);
    store->s_(attr::name, kCacheAttr);
    graph.insertNode(store);
    GRAPH_UPDATE("Recorded cache_enabled of ", *node);
    changed = true;
  }
  return changed;
}

} // namespace

bool RecordAutocastCacheFlags(const std::shared_ptr<Graph>& graph) {
  return recordInBlock(*graph, graph->block());
}

} // namespace jitamp
