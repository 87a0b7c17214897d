#include "jitamp_rewrite.h"

#include "carry_autocast_into_tasks.h"
#include "insert_smart_casts.h"
#include "lower_autocast_scopes.h"
#include "make_waits_blocking.h"
#include "preoptimize.h"
#include "record_autocast_cache_flags.h"

#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/jit_log.h>

#include <vector>

namespace jitamp {

using namespace torch::jit;

bool RewriteAutocast(const std::shared_ptr<Graph>& graph) {
  bool changed = UseScopeOpsAsSaved(*graph);
  changed |= RecordAutocastCacheFlags(graph);
  changed |= LowerAutocastScopes(graph);
  changed |= MakeWaitsBlocking(graph);
  changed |= CarryAutocastIntoTasks(graph);
  // The fork subgraphs, as its walk meets them (one walk fewer).
  std::vector<std::shared_ptr<Graph>> tasks;
  changed |= InsertSmartCasts(graph, &tasks);
  for (const auto& task : tasks) {
    changed |= RewriteAutocast(task);
  }
  if (changed) {
    GRAPH_DUMP("After jitamp's autocast rewrite:", graph);
  }
  return changed;
}

} // namespace jitamp
