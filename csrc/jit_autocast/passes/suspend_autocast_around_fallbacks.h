// Pass, run by the profiling executor after fusion: keeps PyTorch's
// built-in JIT autocast pass out of the fallback functions TorchScript
// makes at run time.
//
// Where the profiling executor guards code it specialized (a TensorExpr
// fusion group's prim::TypeCheck, autograd-zero specialization), the
// unspecialized code goes into a prim::FallbackGraph, which TorchScript
// turns into a new GraphFunction, "fallback_function", when it builds the
// optimized plan. jitamp marks every function it rewrites `ignore_amp`;
// the fallback functions are not, so a GraphFunction runs the built-in
// pass on one (when `torch._C._jit_set_autocast_mode` is on: TorchScript's
// default, and what jitamp.disable(), torch.jit.load without
// jitamp.enable() and LibTorch run with) the first time it is called in
// each autocast state (TorchScript keeps an executor per combination of
// the thread's CPU and CUDA autocast flags), seeding the pass with that
// state. A fallback called inside a jitamp scope then gets the built-in
// casts on top of jitamp's (seen: `x * 0.5` of a float16 input coming back
// float32 under a float16 CPU scope, where eager gives float16).
//
// The pass has every such call made with both flags off, so that the
// fallback runs as the executor with autocast off, which the built-in
// pass leaves alone, and the body still runs under the caller's state:
//
//   %s = jitamp::suspend_autocast()         -- before the call: flags off
//   ... = prim::FallbackGraph_0(..., %s)
//   with prim::FallbackGraph_0 = graph(..., %s):
//     jitamp::resume_autocast(%s)           -- first node: flags back
//
// Only the two flags change, and only between the call and the body's
// first node; if the call fails before the body starts (compiling it), the
// interpreter drops %s and its destructor puts the flags back. For code
// jitamp did not rewrite the built-in's result stays: its pass has already
// cast the code a fallback holds, in the caller's plan, under the same
// flags (scripted scopes do not change them there); a second run could
// only add casts (inside a scripted `enabled=False` scope, whose markers
// the fallback lacks, casts the pass would not have made there).
#pragma once

#include <memory>

namespace torch::jit {
struct Graph;
} // namespace torch::jit

namespace jitamp {

// The pass (above). Returns whether it changed the graph; a fallback
// already handled is left as it is.
bool SuspendAutocastAroundFallbacks(
    const std::shared_ptr<torch::jit::Graph>& graph);

} // namespace jitamp
