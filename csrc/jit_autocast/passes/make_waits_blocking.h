// Pass: torch.jit.wait that blocks the calling thread.
#pragma once

#include <memory>

namespace torch::jit {
struct Graph;
} // namespace torch::jit

namespace jitamp {

// Replaces every aten::wait with jitamp::wait (task_ops.cpp). aten::wait may
// suspend the interpreter and resume the graph on another thread, which
// would close an open autocast scope there instead of on the caller's
// thread. Callees are inlined into callers that may hold a scope open, so
// every wait blocks, in or out of a scope. Idempotent. Returns whether it
// changed the graph. Does not enter fork subgraphs (see RewriteAutocast).
bool MakeWaitsBlocking(const std::shared_ptr<torch::jit::Graph>& graph);

} // namespace jitamp
