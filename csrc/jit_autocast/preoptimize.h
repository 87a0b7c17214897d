// Pass: the graph TorchScript's executors compile, made by jitamp.
#pragma once

#include <memory>

namespace torch::jit {
struct Graph;
} // namespace torch::jit

namespace jitamp {

// Before any executor (the simple one included) sees a function, TorchScript
// preoptimizes a copy of its graph (preoptimizeGraph, api/function_impl.cpp):
// Inline (callees' own preoptimized graphs), PeepholeOptimize with shape
// peepholes off, ConstantPropagationImmutableTypes, and, with
// _set_ignore_amp, no Autocast, then ConstantPooling. Callers inline that
// graph, and GraphFunction keeps it per autocast specialization.
//
// One of those rewrites changes what eager autocast does: the peephole pass
// folds `x.t().t()` to `x`, a view to its base. Eager's autocast caches the
// cast of a leaf that requires grad and never that of a view, so
// `mm(x, x.t().t())` under bfloat16 casts x twice over in eager, and backward
// sums its two gradients in float32 before their casts' backward; folded,
// both casts share the one cached cast, and backward sums them in bfloat16
// (fuzz finding 10). Outside autocast the fold still changes the order in
// which backward sums a gradient (finding 9).
//
// Returns that preoptimized copy of `graph`, the same passes in the same
// order, with every `aten::t` of an `aten::t` kept: the peephole pass runs
// with an aten::alias between the two (which it does not fold), removed
// right after it. Inline reads the callees' optimized_graph(), so they must
// have theirs first (function_rewrite.cpp installs callees first). After
// inlining, a smart cast of None (a `Tensor?` argument the caller passes
// None to) goes: None in every state, and kept, an optional no pass sees
// to be None (symbolic autodiff mishandled layer_norm's weight and bias
// merged into one such value).
std::shared_ptr<torch::jit::Graph> PreoptimizedCopy(
    const std::shared_ptr<torch::jit::Graph>& graph);

// The graph jitamp's simple executor runs (function_rewrite.cpp installs it
// as the function's executor): a copy of `plan` (a PreoptimizedCopy, which
// callers keep inlining whole) without the smart casts that the op's own
// autocast kernel makes anyway.
//
// jitamp's scope ops drive eager's thread-local autocast state, so every op
// in a scope dispatches through eager's autocast kernel, which casts its
// arguments as eager does: a smart cast before it only does that work
// first, at the price of an interpreter op (its kernel then finds nothing
// to do). The casts are in the graph for what reads the IR: the profiling
// executor's symbolic autodiff and fusers, freezing's weight folding, the
// standalone lowering, and callers that inline the plan; the simple
// executor, which runs each op through the dispatcher, needs none of them.
// Kept: the casts of an op, outside any loop, that reads a value that may
// be a weight (a graph input or a prim::GetAttr), where the smart cast saves
// memory traffic with grad mode off (it copies a weight's first cast in a
// region uncached, cast_ops.cpp); in a loop eager's cache serves every
// iteration after the first, which the kernel's cast reaches directly. An
// op's casts go or stay together: the kernel casts in eager's order, which
// numbers the casts' autograd nodes and so orders backward's sums (a cast
// made before the op, another in the kernel, would swap them). List casts
// are kept (their result is a new list). Fork subgraphs are left as they
// are.
// The fold barriers go first (fold_barriers.h): they keep ops from
// constant propagation, which the simple executor does not run.
// Then a loop's low-precision cast of a value defined before the loop is
// made once before it (jitamp::autocast_to_fp16_before_loop, see
// LoopCastHoister in preoptimize.cpp and cast_ops.cpp for what it gives).
// The removal can line a loop up with the node that reads its result, so
// KeepLoopsOutOfLine runs again on the copy; then KeepIfsOutOfLine
// (keep_loops_out_of_line.h). Last, UseScopeOpsOfPlans.
std::shared_ptr<torch::jit::Graph> SimpleExecutorPlan(
    const std::shared_ptr<torch::jit::Graph>& plan);

// What the profiling (or legacy) executor compiles: function_rewrite.cpp
// edits the installed PreoptimizedCopy in place, which callers then inline.
// Its symbolic autodiff (differentiable subgraphs) passes a gradient between
// two ops of one subgraph without casting it to the dtype of the value it
// is the gradient of, which eager's autograd engine does at every edge: in
// `x + linear(x)` under bfloat16, linear's backward got add's float32
// gradient and failed ("expected m1 and m2 to have the same dtype"; plain
// TorchScript too). So a value that may be in lower precision (made by a
// jitamp cast to it or by an op the policy runs in lower precision, or
// computed from those) is read through `jitamp::autocast_dependent`, an
// identity the autodiff has no formula for, by each op that reads two
// tensors or more: the subgraph ends there, and eager's engine casts the
// gradient that crosses it. (jitamp's casts end subgraphs already.)
// FoldStaticCasts removes these in frozen graphs (no input of theirs is a
// constant), and the simple executor's plan drops them.
// Also, each aten::addmm that TorchScript's DecomposeOps would split into
// `mm` + `add` (rounding twice; decomposableAddmm, fold_barriers.h) reads
// its beta through `jitamp::autocast_dependent.scalar`, which no pass folds.
// Then KeepIfsOutOfLine (keep_loops_out_of_line.h). Last, the plan starts
// with `jitamp::ignore_amp_in_fallbacks()` (IgnoreAmpInFallbacks,
// fallback_calls.h), which keeps the built-in JIT autocast pass out of the
// fallback functions of differentiable subgraphs. Then UseScopeOpsOfPlans.
void ProfilingExecutorPlan(const std::shared_ptr<torch::jit::Graph>& plan);

// What tells a function jitamp configured from one it did not. A graph as
// rewritten (and saved) opens scopes with jitamp::autocast_enter (or .args)
// and names the region outside them with jitamp::autocast_caller_region;
// every function with a smart cast or a scope has one of them. Those ops
// raise when they run: only a function whose executor TorchScript built
// from that graph runs them, with TorchScript's defaults (the profiling
// executor and its symbolic autodiff, the built-in JIT autocast pass), whose
// results differ from eager's -- a copy made by Module::clone or
// torch::jit::freeze in C++ (after the loader configured the functions it
// found; the copy's are new), or a function scripted without jitamp that
// inlines a jitamp callee. The plans of jitamp's executors use
// jitamp::autocast_enter_in_plan (.args) and
// jitamp::autocast_caller_region_in_plan instead, which work. Recurses into
// blocks and task subgraphs. The graph callers inline (the simple
// executor's PreoptimizedCopy) keeps the raising ops: a caller jitamp
// configures gets its own plan, one it does not raises.
void UseScopeOpsOfPlans(torch::jit::Graph& plan);

// The reverse, the first step of jitamp's rewrite (jitamp_rewrite.h): a
// graph that inlined a plan's ops (torch.jit.freeze inlines the graphs of
// the profiling executor's plans) holds only the ops as saved once
// rewritten. Returns whether it changed the graph.
bool UseScopeOpsAsSaved(torch::jit::Graph& graph);

} // namespace jitamp
