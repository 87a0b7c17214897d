// Pass: the fold barriers of a graph whose casts are folded
// (FoldStaticCasts), settled: ops every state agrees on done now, the
// others kept from constant folding.
#pragma once

#include <memory>

namespace torch::jit {
struct Graph;
} // namespace torch::jit

namespace jitamp {

// For each op whose result the autocast state may change
// (autocastMayChange, policy_table.h) and whose inputs, seen through their
// fold barriers (fold_barriers.h), are all constants: where every state it
// may run in gives the same bits (its scope's static state; in the
// caller's, autocast off and on with each dtype eager allows), the op is
// done now and replaced by constants; otherwise it keeps (or gets) a
// barrier. An op whose inputs may still become constants keeps its barrier;
// one whose inputs cannot loses it. TorchScript's constant propagation then
// folds what the new constants make foldable, and this repeats while
// something was done. Never does an op that is mutable, nondeterministic,
// written through an alias, or autocast differently by other torch versions
// (policyVariesAcrossTorch). Does not enter fork subgraphs. Returns whether
// the graph changed; `did_ops` (if given) says whether an op was done now,
// which may give a smart cast constant inputs.
bool SettleFoldBarriers(
    const std::shared_ptr<torch::jit::Graph>& graph,
    bool* did_ops = nullptr);

} // namespace jitamp
