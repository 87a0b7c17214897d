// Module pass (standalone frozen models): keeps TorchScript's BatchMM from
// merging a method's mm ops (one rounding where eager rounds each).
#pragma once

namespace torch::jit {
struct Module;
} // namespace torch::jit

namespace jitamp {

// For the same models: each method of `module` (not its submodules') that
// has an aten::mm starts with
//   if self._unbatched_mm_guard:  # False
//       self._unbatched_mm_guard_tensor.zero_()
// The branch never runs. TorchScript's stock executors run BatchMM on
// no-grad code, which replaces a tree of four or more `mm` summed by `add`
// with one `mm` of concatenated inputs (prim::MMTreeReduce: one rounding
// where eager rounds each product and sum, 0.25 off on a 64x64 bfloat16
// result) and eight or more `mm` of one input with one `mm` of the others
// concatenated (prim::MMBatchSide); it does nothing to a graph that holds
// an in-place aten op, and the write to a module attribute is one that no
// pass removes. Idempotent. Returns whether it changed a graph (which then
// needs PreoptimizeModule).
bool KeepMMsUnbatchedInModule(const torch::jit::Module& module);

} // namespace jitamp
