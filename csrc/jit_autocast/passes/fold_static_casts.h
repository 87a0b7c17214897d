// Pass: what the constants of a graph (a frozen model's weights) and the
// autocast states its IR fixes decide, done once: the casts of constant
// tensors, and the ops of them every state agrees on.
#pragma once

#include <memory>

namespace torch::jit {
struct Graph;
} // namespace torch::jit

namespace jitamp {

// One walk in program order, two kinds of node, one question (in which
// autocast states can this node run here, and what does it give in each):
//  - a smart cast (cast_ops.cpp) whose tensor inputs are all constants
//    (prim::Constant: the weights of a module frozen with torch.jit.freeze)
//    and whose governing autocast state is static (static_scopes.h): run
//    now, with the same kernel and that state (grad mode off, no cast
//    cache: eager's cast, hence eager's bits), and replaced by its result,
//    a new constant, or by its input where the cast returns its input (not
//    floating point, float64, already the target dtype, another device
//    type, autocast statically off, a device type the cast's `devices`
//    does not name). One constant per weight, state and cast. The constant
//    weights of a CPU RNN cell are cast as the aten::linear in its kernel
//    casts them.
//  - an op whose result the autocast state may change (autocastMayChange,
//    policy_table.h) and whose inputs, seen through their fold barriers
//    (fold_barriers.h), are all constants: where every state it may run in
//    gives the same bits (its scope's static state; in the caller's,
//    autocast off and on with each dtype eager allows), done now and
//    replaced by constants; otherwise it keeps (or gets) a barrier. An op
//    whose inputs may still become constants keeps its barrier; one whose
//    inputs cannot loses it. Never does an op that is mutable,
//    nondeterministic, written through an alias, or autocast differently
//    by other torch versions (policyVariesAcrossTorch).
// A cast done now hands its constant to the ops after it in the same walk.
// TorchScript's constant propagation then folds what the new constants make
// foldable, and the walk repeats while something was done. At last drops
// the caller-region tokens nothing uses any more. Casts of non-constant
// values, and every cast where the state depends on the caller, stay. Does
// not enter fork subgraphs (a task runs in the state its caller hands it).
// Sound on any rewritten graph, frozen or not. Idempotent (InsertSmartCasts
// does not cast a constant again where this pass would remove the cast).
// Returns whether it changed the graph.
bool FoldStaticCasts(const std::shared_ptr<torch::jit::Graph>& graph);

} // namespace jitamp
