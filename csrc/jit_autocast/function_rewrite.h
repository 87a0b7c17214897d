// Rewriting compiled functions and modules (as opposed to bare graphs).
#pragma once

#include <ATen/core/ivalue.h>

#include <string>
#include <vector>

namespace torch::jit {
struct Function;
struct Module;
} // namespace torch::jit

namespace jitamp {

struct RewriteOptions {
  // Run rewritten functions with TorchScript's simple executor (eager's
  // autograd, op by op) rather than the profiling executor (symbolic
  // autodiff and profile-guided optimizations). See function_rewrite.cpp.
  bool simple_executor = true;
};

// Runs RewriteAutocast on the function's graph and, first, on every function
// and method it calls (callees before callers). Throws if a graph that needs
// rewriting has already been run or inlined into a caller that ran: its
// executor holds a copy that a rewrite can no longer reach. Returns the
// qualified names of the functions that changed.
std::vector<std::string> RewriteFunction(
    torch::jit::Function& function,
    RewriteOptions options = {});

// The same for every method of the module and of its submodules.
std::vector<std::string> RewriteModule(
    const torch::jit::Module& module,
    RewriteOptions options = {});

// The same for every function and method of the compilation unit that
// holds `object`'s class: all of a model that torch.jit.load /
// torch::jit::load compiled. Run by jitamp::prepare_loaded (loader_ops.cpp)
// while the model is unpickled, before anything of it runs. Does nothing
// where jitamp has configured a function of the unit already: there the
// model is a deep copy of one jitamp configured (its functions are the
// original's), and the unit may hold code that is not jitamp's (Python's
// one compilation unit of every scripted function).
std::vector<std::string> RewriteCompilationUnitOf(
    const c10::IValue& object,
    RewriteOptions options = {});

// Runs FoldStaticCasts (fold_static_casts.h) on every method of the module
// and of its submodules: for a module frozen with torch.jit.freeze, after
// RewriteModule; then KeepConstantsApartInModule and PreoptimizeModule.
// Throws if a graph it would change has already run. Returns the qualified
// names of the methods whose casts it folded.
// First it points the call stacks of inlined nodes away from the methods
// freezing deleted (a use after free when TorchScript reports an error
// raised in inlined code; function_rewrite.cpp, FrozenCallStackRepair).
std::vector<std::string> FoldStaticCastsInModule(
    const torch::jit::Module& module);

// For a frozen model that is saved: loading compiles each method again, and
// its constant pooling merges tensor constants of equal values (dtype,
// device, sizes) whose types no longer tell their strides apart (a weight
// and a folded view of the same values, such as a slice of a reflect pad),
// so an op is handed another layout than eager's, and a kernel that sums in
// another order there rounds otherwise (linear: 1 ulp off eager, every
// loader). Each tensor constant of a method of `module` (not its
// submodules') that pooling would merge with an earlier one laid out
// otherwise (strides, storage offset) is read instead from an attribute of
// the module holding it, `_pooled_apart_constant_<n>`, which no pass pools
// (serialization keeps its layout); freezing the model again would undo
// it. Run by FoldStaticCastsInModule. Returns whether it changed a graph
// (which then needs PreoptimizeModule).
bool KeepConstantsApartInModule(const torch::jit::Module& module);

// For a model that runs on TorchScript's stock executors (a standalone
// frozen model, strip_static_scopes.h): each aten::addmm whose beta and
// alpha are the constant 1 in a method of `module` (not its submodules')
// reads beta from an attribute of the module holding that constant,
// `_unsplit_addmm_beta_<type>`, which no pass folds (a freeze would). The
// profiling executor's DecomposeOps splits it otherwise into `mm` + `add`
// (decomposableAddmm, fold_barriers.h), off eager's values by 0.125 on a
// 64x64 bfloat16 result. Returns whether it changed a graph (which then
// needs PreoptimizeModule).
bool KeepAddmmWholeInModule(const torch::jit::Module& module);

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

// Each rewrite above also makes the graph that TorchScript's executors
// compile and callers inline (GraphFunction's optimized graphs), jitamp's
// preoptimization of the rewritten graph (preoptimize.h), before the first
// call. A graph changed afterwards (after FoldStaticCasts, which does this
// itself, or StripStaticScopes) needs it again: this makes it for every
// method of the module and its submodules, and what they call, that has
// not run and holds jitamp's graph (a function jitamp did not rewrite keeps
// TorchScript's preoptimization).
void PreoptimizeModule(const torch::jit::Module& module);

// A function rewritten for the simple executor also gets its executor from
// jitamp before its first call: one simple executor, in every slot, built
// from SimpleExecutorPlan (preoptimize.h), the optimized graph less the
// casts the ops' autocast kernels make anyway. A later rewrite leaves such a
// function as it is (its executor may be running) unless its graph needs
// rewriting; PreoptimizeModule makes both again.
//
// Whether TorchScript has built an executor or an inlinable optimized graph
// for the function, i.e. it has run (or a caller that inlined it has). The
// optimized graph and the executor jitamp installs do not count: jitamp made
// them from the graph as it is, and makes them again when it changes it.
bool HasRun(torch::jit::Function& function);

} // namespace jitamp
