// Pass: put a whole graph inside one autocast scope.
#pragma once

#include <c10/core/ScalarType.h>

#include <memory>
#include <string>

namespace torch::jit {
struct Graph;
} // namespace torch::jit

namespace jitamp {

// As if the function's source were
//   with torch.autocast(device_type, dtype=dtype):
//       <body>
// for mixed precision in a model saved without autocast in its source
// (`jitamp convert --autocast`). Adds
//   %guard, %region = jitamp::autocast_enter.args(device_type, dtype, True, None)
// first and jitamp::autocast_exit(%guard) before the return (scope_ops.cpp);
// scopes the body has stay, nested inside. Run before RewriteAutocast, which
// then casts the body for the new scope. Throws for a device type other
// than cpu/cuda or a dtype other than bfloat16/float16.
void WrapInAutocastScope(
    const std::shared_ptr<torch::jit::Graph>& graph,
    const std::string& device_type,
    c10::ScalarType dtype);

} // namespace jitamp
