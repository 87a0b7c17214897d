// Pass: a frozen graph whose autocast scopes are all static, without any
// jitamp op (it then runs in a stock LibTorch / torch.jit.load).
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace torch::jit {
struct Graph;
} // namespace torch::jit

namespace jitamp {

// Why `graph` (rewritten, frozen, FoldStaticCasts done) cannot do without
// jitamp's ops, one line each (with its source location); empty if it can.
// It can where, for a caller whose autocast is off (CPU and CUDA):
//  - every scope is a CPU scope with constant enabled and dtype
//    (static_scopes.h);
//  - every smart cast can be spelled with stock ops: where the CPU state is
//    off (outside every scope, the caller's: off), or its policy does not
//    name CPU, it does nothing; in an enabled scope, a Tensor cast
//    (autocast_to_fp16 / _fp32, and fp32_set_opt_dtype's with a constant
//    dtype) is eager's `to(dtype)` if the input is a floating, non-float64
//    CPU (or MKLDNN) tensor of another dtype; promote casts, `Tensor?` and
//    `Tensor[]` casts in an enabled scope cannot;
//  - every op in an enabled scope gives eager's result with the thread's
//    state off once its casts are explicit: prim ops and ops TorchScript
//    alone registers (but no calls: callees keep their jitamp ops), ops
//    with a CPU autocast kernel and a cast policy in the table (eager runs
//    them below the autocast key, casts done), ops with a kernel of their
//    own and no CompositeImplicitAutograd one, and a few
//    CompositeImplicitAutograd ops whose decomposition reaches no op eager
//    autocasts (flatten, layer_norm, batch_norm, max_pool2d, dropout, ...,
//    tests/test_freeze.py checks each against eager). Any other
//    CompositeImplicitAutograd op decomposes into ops eager autocasts;
//  - no forked task.
std::vector<std::string> StaticScopeObstacles(
    const std::shared_ptr<torch::jit::Graph>& graph);

// Where StaticScopeObstacles finds none: lowers every smart cast as said
// there, removes the scope ops, the region tokens and the cache-flag ops
// (and the autocast objects only they used), and then dead code. Exact for
// callers whose autocast is off; a caller's autocast reaches the ops of
// the graph as it reaches any stock TorchScript model (docs/frozen.md,
// "What the frozen model promises"). Throws, changing nothing, where there are
// obstacles. Idempotent. Returns whether the graph changed.
bool StripStaticScopes(const std::shared_ptr<torch::jit::Graph>& graph);

} // namespace jitamp
