// Pass, run by the profiling executor after fusion: keeps PyTorch's
// built-in JIT autocast pass out of the fallback functions TorchScript
// makes at run time.
#pragma once

#include <memory>

namespace torch::jit {
struct Graph;
} // namespace torch::jit

namespace jitamp {

// Each prim::FallbackGraph call in `graph`'s blocks gets
// `%s = jitamp::suspend_autocast()` before it as its last input, and the
// fallback's body starts with `jitamp::resume_autocast(%s)` (a body two
// calls share, once): the call is made with the CPU and CUDA autocast flags
// off, and the body runs under the caller's. Does not enter fork
// subgraphs. Returns whether it changed the graph; a fallback already
// handled is left as it is (idempotent).
// Why: docs/passes.md, 'Why, pass by pass'.
bool SuspendAutocastAroundFallbacks(
    const std::shared_ptr<torch::jit::Graph>& graph);

} // namespace jitamp
