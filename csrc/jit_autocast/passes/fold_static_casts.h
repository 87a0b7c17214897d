// Pass: casts of constant tensors (frozen weights) whose autocast state is
// known from the IR, and the ops of them every state agrees on, done once.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/DeviceType.h>

#include <memory>
#include <optional>
#include <string>

namespace torch::jit {
struct Graph;
} // namespace torch::jit

namespace jitamp {

class StaticScopes;

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
// Then settles the fold barriers (fold_barriers.h): an op the autocast
// state may change whose inputs are constants is done now where every
// state it may run in gives the same bits, and otherwise kept from
// constant folding; TorchScript's constant propagation folds what that
// makes foldable, and the casts are folded again, while ops are done. At
// last drops the caller-region tokens nothing uses any more. Does not
// enter fork subgraphs (a task runs in the state its caller hands it).
// Sound on any rewritten graph, frozen or not. Idempotent
// (InsertSmartCasts does not cast a constant again where this pass would
// remove the cast). Returns whether it changed the graph.
bool FoldStaticCasts(const std::shared_ptr<torch::jit::Graph>& graph);

// Whether the single-tensor cast `lower_precision` (autocast_to_fp16, else
// autocast_to_fp32) of the constant `tensor`, for the policy's `devices`,
// is known to return `tensor` itself at the point `scopes` describes: its
// device type's state is static and the cast does nothing there.
bool StaticCastIsIdentity(
    bool lower_precision,
    const at::Tensor& tensor,
    const std::string& devices,
    const StaticScopes& scopes);

// The dtype that the single-tensor cast `lower_precision` (as above), for
// the policy's `devices`, gives a tensor of `dtype` on `device` at the
// point `scopes` describes, found by running the kernel under that state
// on an empty tensor: nullopt where the device type's state is not static
// or the cast returns such a tensor itself.
std::optional<at::ScalarType> StaticCastDtype(
    bool lower_precision,
    at::ScalarType dtype,
    c10::Device device,
    const std::string& devices,
    const StaticScopes& scopes);

} // namespace jitamp
