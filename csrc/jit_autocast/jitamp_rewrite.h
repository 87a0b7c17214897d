// jitamp's pipeline: the passes that make a graph do what eager autocast
// does, in order, in the style of torch/csrc/jit/passes.
#pragma once

#include <memory>

namespace torch::jit {
struct Graph;
} // namespace torch::jit

namespace jitamp {

// Rewrites `graph` in place, then the subgraphs of its prim::fork /
// prim::awaitable nodes (each a graph of its own):
//  0. UseScopeOpsAsSaved        (preoptimize.h)
//  1. RecordAutocastCacheFlags  (record_autocast_cache_flags.h)
//  2. LowerAutocastScopes       (lower_autocast_scopes.h)
//  3. MakeWaitsBlocking         (make_waits_blocking.h)
//  4. CarryAutocastIntoTasks    (carry_autocast_into_tasks.h)
//  5. InsertSmartCasts          (insert_smart_casts.h)
// Called functions and methods are not followed (see function_rewrite.h).
// Idempotent: a second run changes nothing. Returns whether the graph
// changed. PYTORCH_JIT_LOG_LEVEL=jitamp_rewrite logs the result,
// '>insert_smart_casts' (and the other pass file names) each rewrite.
bool RewriteAutocast(const std::shared_ptr<torch::jit::Graph>& graph);

} // namespace jitamp
