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
// torch::jit::load compiled. Run by jitamp::prepare_loaded (loader.cpp)
// while the model is unpickled, before anything of it runs. Does nothing
// where jitamp has configured a function of the unit already: there the
// model is a deep copy of one jitamp configured (its functions are the
// original's), and the unit may hold code that is not jitamp's (Python's
// one compilation unit of every scripted function).
std::vector<std::string> RewriteCompilationUnitOf(
    const c10::IValue& object,
    RewriteOptions options = {});

// Each rewrite above also makes the graph that TorchScript's executors
// compile and callers inline (GraphFunction's optimized graphs), jitamp's
// preoptimization of the rewritten graph (PreoptimizedCopy, pipeline.h), before the first
// call. A graph changed afterwards (after FoldStaticCasts, which does this
// itself, or StripStaticScopes) needs it again: this makes it for every
// method of the module and its submodules, and what they call, that has
// not run and holds jitamp's graph (a function jitamp did not rewrite keeps
// TorchScript's preoptimization).
void PreoptimizeModule(const torch::jit::Module& module);

// A function rewritten for the simple executor also gets its executor from
// jitamp before its first call: one simple executor, in every slot, built
// from SimpleExecutorPlan (pipeline.h). A later rewrite leaves such a
// function as it is (its executor may be running) unless its graph needs
// rewriting; PreoptimizeModule makes both again. HasRun:
// ir/graph_function_state.h.

} // namespace jitamp
