// The smart casts an op reads: the device sets and policies that make them,
// the order this torch inserts them in, and a graph rewritten under another
// torch brought to this torch's casts.
#pragma once

#include "ir/policy_table.h"

#include <c10/util/SmallVector.h>
#include <torch/csrc/jit/ir/ir.h>

#include <optional>
#include <string>
#include <utility>

namespace jitamp {

// The device sets an op's casts name, each with its policy: one set
// ("cpu,cuda") where both device types have the same policy, else "cpu"
// then "cuda".
using CastGroups = c10::SmallVector<std::pair<const char*, CastPolicy>, 2>;
CastGroups castGroupsOf(const EffectivePolicy& policy);

// The `devices` constant of a smart cast ("" if it is not a constant).
std::string devicesOf(const torch::jit::Node* cast);

// Whether eager's autocast kernels cast an op's tensor arguments last
// first (the compiler's order). Asked once, of eager's CPU mm. The pass
// inserts an op's casts in this order, and the promote kernels cast in it.
// Why: docs/runtime-model.md, 'Smart casts in the IR'.
bool eagerCastsLastArgumentFirst();

// Whether an op's casts go in last argument first: eager's order
// (eagerCastsLastArgumentFirst), unless a test overrides it.
bool castsLastArgumentFirst();

// Tests only: insert an op's casts last argument first (true) or first
// argument first (false), as a torch built by another compiler would, to
// make the graphs it saves; nullopt: this torch's order.
void overrideCastOrderForTesting(std::optional<bool> last_first);

// For an op the policy table has a row for, in a graph rewritten under
// another torch: each input reached through a smart cast that this torch's
// `policy` does not make (the op was autocast there and is not here:
// policyVariesAcrossTorch) is read from its source again, and casts left
// unread go (other readers of a shared cast keep it). Returns whether it
// changed the graph.
bool dropCastsThisTorchDoesNotMake(
    torch::jit::Node* node,
    const c10::FunctionSchema& schema,
    const EffectivePolicy& policy);

// The casts `node` reads, where they sit together just before it, put in
// the order InsertSmartCasts inserts them in on this torch: device set by
// device set (castGroupsOf), then argument by argument in
// castsLastArgumentFirst's order. (The order decides the casts' autograd
// sequence numbers, hence the order backward sums gradients; a model saved
// by a torch built by another compiler carries the other order.) Promote
// casts order their inputs at run time and are left. Returns whether it
// changed the graph.
bool putCastsInThisTorchsOrder(
    torch::jit::Node* node,
    const c10::FunctionSchema& schema,
    const EffectivePolicy& policy);

} // namespace jitamp
