#include "jitamp_rewrite.h"

#include "carry_autocast_into_tasks.h"
#include "insert_smart_casts.h"
#include "jitamp_ir.h"
#include "lower_autocast_scopes.h"
#include "make_waits_blocking.h"
#include "record_autocast_cache_flags.h"

#include <torch/csrc/jit/jit_log.h>

#include <vector>

namespace jitamp {

using namespace torch::jit;

namespace {

void collectTaskSubgraphs(
    Block* block,
    std::vector<std::shared_ptr<Graph>>& out) {
  for (Node* node : block->nodes()) {
    for (Block* sub : node->blocks()) {
      collectTaskSubgraphs(sub, out);
    }
    if (hasTaskSubgraph(node)) {
      out.push_back(node->g(attr::Subgraph));
    }
  }
}

} // namespace

bool RewriteAutocast(const std::shared_ptr<Graph>& graph) {
  bool changed = RecordAutocastCacheFlags(graph);
  changed |= LowerAutocastScopes(graph);
  changed |= MakeWaitsBlocking(graph);
  changed |= CarryAutocastIntoTasks(graph);
  changed |= InsertSmartCasts(graph);
  std::vector<std::shared_ptr<Graph>> tasks;
  collectTaskSubgraphs(graph->block(), tasks);
  for (const auto& task : tasks) {
    changed |= RewriteAutocast(task);
  }
  if (changed) {
    GRAPH_DUMP("After jitamp's autocast rewrite:", graph);
  }
  return changed;
}

} // namespace jitamp
