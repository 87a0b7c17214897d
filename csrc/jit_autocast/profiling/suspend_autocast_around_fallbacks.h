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
// calls share, once):
//   %s = jitamp::suspend_autocast()         -- before the call: flags off
//   ... = prim::FallbackGraph_0(..., %s)
//   with prim::FallbackGraph_0 = graph(..., %s):
//     jitamp::resume_autocast(%s)           -- first node: flags back
// The call is made with the CPU and CUDA autocast flags off, and the body
// runs under the caller's: only the two flags change, and only between the
// call and the body's first node; if the call fails before the body starts
// (compiling it), the interpreter drops %s and its destructor puts the
// flags back. Does not enter fork subgraphs. Returns whether it changed the
// graph; a fallback already handled is left as it is (idempotent).
// Why: docs/passes.md, 'SuspendAutocastAroundFallbacks'.
bool SuspendAutocastAroundFallbacks(
    const std::shared_ptr<torch::jit::Graph>& graph);

} // namespace jitamp
