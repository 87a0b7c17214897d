// Pass: eager autocast's per-op casts, as ops the JIT can see.
#pragma once

#include <memory>
#include <vector>

namespace torch::jit {
struct Graph;
} // namespace torch::jit

namespace jitamp {

// Before every op that eager autocast handles on some device (the effective
// policy table, policy_table.h), inserts the smart cast of that op's policy
// on its tensor inputs, including `Tensor?` and `Tensor[]` ones:
// jitamp::autocast_to_fp16 / autocast_to_fp32 / autocast_promote
// (cast_ops.cpp), each deciding at run time from its input and the
// thread's autocast state. Each cast takes the token of its region: the
// innermost open scope's (LowerAutocastScopes runs first), or
// jitamp::autocast_caller_region() outside any scope (open_scopes.h).
// Idempotent. A graph rewritten under another torch (a saved model, loaded
// here) gets this torch's casts, in this torch's order (op_casts.h:
// dropCastsThisTorchDoesNotMake, putCastsInThisTorchsOrder). Returns
// whether it changed the graph. Does not enter fork subgraphs (see
// RewriteAutocast):
// given `tasks`, it appends them there, in program order.
bool InsertSmartCasts(
    const std::shared_ptr<torch::jit::Graph>& graph,
    std::vector<std::shared_ptr<torch::jit::Graph>>* tasks = nullptr);

} // namespace jitamp
