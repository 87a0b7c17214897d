// Pass: casts of constant tensors (frozen weights) whose autocast state is
// known from the IR, and the ops of them every state agrees on, done once.
#pragma once

#include <memory>

namespace torch::jit {
struct Graph;
} // namespace torch::jit

namespace jitamp {

// For each smart cast (cast_ops.cpp) whose tensor inputs are all constants
// (prim::Constant: the weights of a module frozen with torch.jit.freeze)
// and whose governing autocast state is static (static_scopes.h): runs the
// cast now, with the same kernel and that state (grad mode off, no cast
// cache: eager's cast, hence eager's bits), and replaces it by its result,
// a new constant, or by its input where the cast returns its input (not
// floating point, float64, already the target dtype, another device type,
// autocast statically off, a device type the cast's `devices` does not
// name). One constant per weight, state and cast. Casts of non-constant
// values, and every cast where the state depends on the caller, stay.
// Then settles the fold barriers (SettleFoldBarriers) and folds the casts
// again, while that does ops now. At last drops the caller-region tokens
// nothing uses any more. Does not enter fork subgraphs (a task runs in the
// state its caller hands it). Sound on any rewritten graph, frozen or not.
// Idempotent (InsertSmartCasts does not cast a constant again where this
// pass would remove the cast). Returns whether it changed the graph.
bool FoldStaticCasts(const std::shared_ptr<torch::jit::Graph>& graph);

} // namespace jitamp
