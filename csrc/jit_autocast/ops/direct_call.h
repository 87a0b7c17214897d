// jitamp::direct_call: an op whose autocast kernel only casts, called with
// that kernel's casts made by the op itself (direct_call.cpp). Put in the
// simple executor's plan by CallAutocastOpsDirectly
// (passes/call_autocast_ops_directly.h).
//
// Eager reaches such an op in two dispatches: the first finds its autocast
// kernel (ATen/autocast_mode.h's WrapFunction_: lower_precision_fp, fp32 or
// promote), which excludes its own dispatch key, casts the arguments with
// cached_cast and calls the op again, through the dispatcher; the second
// runs the op below the key. jitamp::direct_call makes the same decisions
// with the same functions (the dispatch key the op's arguments and the
// thread's state select, prioritize, cached_cast, in the compiler's order
// of arguments) and calls the op once, with the key excluded as the kernel
// excludes it: the first dispatch, its boxing and unboxing are what it
// saves. Where the key is not one whose kernel is known to be that plain
// (another device's, a key above autocast's, a kernel of its own such as
// CUDA's _cudnn_rnn), it calls the op as the interpreter would.
// The node: ops::kDirectCall (ir/jitamp_ir.h). Why: docs/runtime-model.md,
// "What a scope costs per op".
#pragma once

#include <ATen/core/function_schema.h>

namespace jitamp {

// Whether a node of `schema` can become a direct_call: the op's kernel for
// AutocastCPU or AutocastCUDA is the one ATen/autocast_mode.cpp registers
// (the dispatcher's table says where each kernel came from), its policy
// (the table's) is lower_precision_fp, fp32 or promote, and its tensor
// arguments are Tensor, Tensor? or Tensor[].
bool canCallDirectly(const c10::FunctionSchema& schema);

} // namespace jitamp
