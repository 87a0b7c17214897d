// The jitamp pass: one entry point, in the style of torch/csrc/jit/passes.
#pragma once

#include <memory>

namespace torch::jit {
struct Graph;
} // namespace torch::jit

namespace jitamp {

// Rewrites `graph` in place so that, when run, it does what eager autocast
// does:
//  * every `with` scope on a torch.autocast / torch.amp.autocast /
//    torch.cpu.amp.autocast / torch.cuda.amp.autocast object is lowered to
//    jitamp::autocast_enter / jitamp::autocast_exit, which drive eager's
//    thread-local autocast state (and the scripted __init__ gets eager's
//    cache_enabled resolution);
//  * before every op that eager autocast handles on some device, the smart
//    cast of that op's policy is inserted on its tensor inputs.
// Subgraphs of prim::fork are rewritten too; called functions and methods
// are not (see function_rewrite.h). Idempotent: a second run changes nothing.
// Returns whether the graph changed. PYTORCH_JIT_LOG_LEVEL=jitamp_rewrite
// logs each rewrite.
bool RewriteAutocast(const std::shared_ptr<torch::jit::Graph>& graph);

} // namespace jitamp
