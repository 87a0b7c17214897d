// Pass (export pipeline): a rewritten, inlined graph as torch.export takes
// its autocast regions: each scope's enter op with its arguments as inputs,
// no smart casts (docs/exporting.md).
#pragma once

#include <memory>

namespace torch::jit {
struct Graph;
struct Node;
} // namespace torch::jit

namespace jitamp {

// In `graph` (inlined; jitamp.export runs it on a copy's forward):
//  - every smart cast and fold barrier is removed, its results replaced by
//    its inputs: in the exported program each region runs under eager's
//    autocast (torch.export's wrap_with_autocast), whose kernels cast as
//    the smart casts would;
//  - `autocast_enter(object)` of an autocast object made and set once in
//    its block (static_scopes.h) becomes `autocast_enter.args(device_type,
//    dtype, enabled, cache_enabled)` with the values the object was set
//    to (cache_enabled: what the source passed, None where it passed
//    nothing), attribute reads of the object read those values, and the
//    object is gone where nothing else uses it;
//  - caller-region tokens and cache-flag ops nothing reads are removed.
// An enter op whose object escapes stays as it is (jitamp.export names it).
// Does not enter fork subgraphs. Returns whether it changed the graph.
bool ExplicitScopesForExport(const std::shared_ptr<torch::jit::Graph>& graph);

// The enter step above for one enter op (jitamp::autocast_enter, or
// autocast_enter_in_plan where `in_plan`, of an object): its .args
// overload in its place, the object's reads and the object gone as above.
// In a plan, cache_enabled is the flag set on the object (evaluated where
// the object was made, as eager's __init__ does) and the op keeps the
// enter's source. Returns false, changing nothing, where the object
// escapes or is not set once in its block before the enter.
bool EnterWithArguments(torch::jit::Node* enter, bool in_plan);

} // namespace jitamp
