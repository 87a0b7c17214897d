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
// The branch never runs; its in-place op keeps TorchScript's BatchMM (run
// by the stock executors on no-grad code) from merging the method's `mm`s,
// and no pass removes a write to a module attribute. Idempotent. Returns
// whether it changed a graph (which then needs PreoptimizeModule). Why:
// docs/passes.md, 'KeepMMsUnbatchedInModule'.
bool KeepMMsUnbatchedInModule(const torch::jit::Module& module);

} // namespace jitamp
