// Pass: eager's cache_enabled resolution for scripted autocast objects.
#pragma once

#include <memory>

namespace torch::jit {
struct Graph;
} // namespace torch::jit

namespace jitamp {

// Eager's autocast.__init__ turns cache_enabled=None into the current cache
// flag when the object is built; the scripted __init__ drops the argument.
// After each scripted __init__ of an autocast object, stores the resolved
// flag (jitamp::autocast_cache_enabled) in the attribute kCacheAttr, which
// jitamp::autocast_enter reads. Idempotent. Returns whether it changed the
// graph. Does not enter fork subgraphs (see RewriteAutocast).
bool RecordAutocastCacheFlags(const std::shared_ptr<torch::jit::Graph>& graph);

} // namespace jitamp
