#include "pipeline/function_rewrite.h"

#include "ir/block_walk.h"
#include "ir/graph_function_state.h"
#include "ir/jitamp_ir.h"
#include "pipeline/pipeline.h"

#include <torch/csrc/jit/api/compilation_unit.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/api/module.h>

#include <memory>
#include <string>
#include <unordered_set>

namespace jitamp {

using namespace torch::jit;

namespace {

// The graph the function's executors compile and its callers inline,
// whatever the autocast state at its first call: jitamp's preoptimization
// of its graph (pipeline.h), not TorchScript's. Its callees must have
// theirs already (Inline reads them). The graphs of all specializations are
// the same (with _set_ignore_amp, TorchScript's would not differ either).
void installOptimizedGraph(GraphFunction& graph_function) {
  setOptimizedGraphs(graph_function, PreoptimizedCopy(graph_function.graph()));
}

// installOptimizedGraph and, for the simple executor, the executor itself:
// built from SimpleExecutorPlan (pipeline.h), in every slot, before
// TorchScript would build one from the optimized graph at the first call.
// (For the profiling executor TorchScript builds it then, from the
// optimized graph with ProfilingExecutorPlan's autodiff boundaries.)
void installPlan(GraphFunction& graph_function, bool simple_executor) {
  installOptimizedGraph(graph_function);
  if (!simple_executor) {
    ProfilingExecutorPlan(optimizedGraph(graph_function));
    return;
  }
  setExecutors(
      graph_function,
      GraphExecutor(
          SimpleExecutorPlan(optimizedGraph(graph_function)),
          graph_function.name(),
          ExecutorExecutionMode::SIMPLE));
}

void collectCallees(Block* block, std::vector<Function*>& callees) {
  forEachNode(
      block,
      [&](Node* node) {
        if (node->kind() == prim::CallFunction) {
          if (auto fn = node->input(0)->type()->cast<FunctionType>()) {
            callees.push_back(fn->function());
          }
        } else if (node->kind() == prim::CallMethod) {
          if (auto cls = node->input(0)->type()->cast<ClassType>()) {
            if (Function* method = cls->findMethod(node->s(attr::name))) {
              callees.push_back(method);
            }
          }
        }
      },
      Subgraphs::Visit);
}

// Whether `block` (or a block or task subgraph within) holds one of the
// ops that raise outside jitamp's plans (UseScopeOpsOfPlans, use_scope_ops_of_plans.h).
bool holdsScopeOpAsSaved(Block* block) {
  return anyNode(
      block, [](Node* node) { return isScopeOpAsSaved(node); }, Subgraphs::Visit);
}

// Whether a function with graph `graph` and these callees runs such an op
// where jitamp did not configure it: its own, or one in the graph of a
// callee jitamp configured (which its executor inlines).
bool runsRewrittenCode(Graph& graph, const std::vector<Function*>& callees) {
  if (holdsScopeOpAsSaved(graph.block())) {
    return true;
  }
  for (Function* callee : callees) {
    if (!callee->isGraphFunction()) {
      continue;
    }
    auto& graph_function = toGraphFunction(*callee);
    if (holdsJitampsOptimizedGraph(graph_function) &&
        holdsScopeOpAsSaved(
            optimizedGraph(graph_function)->block())) {
      return true;
    }
  }
  return false;
}

class FunctionRewriter {
 public:
  explicit FunctionRewriter(RewriteOptions options) : options_(options) {}

  void rewrite(Function& function) {
    if (!function.isGraphFunction() || !visited_.insert(&function).second) {
      return;
    }
    auto& graph_function = toGraphFunction(function);
    graph_function.ensure_defined();
    std::shared_ptr<Graph> graph = graph_function.graph();
    std::vector<Function*> callees;
    collectCallees(graph->block(), callees);
    for (Function* callee : callees) {
      rewrite(*callee);
    }
    if (HasRun(function)) {
      checkMaySeeAgain(function, graph_function, *graph, callees);
      return;
    }
    // Idempotent: a graph rewritten already (also one loaded rewritten) is
    // left as it is, so the rewrite itself answers whether one was needed.
    const bool rewritten = RewriteAutocast(graph);
    if (rewritten) {
      changed_.push_back(function.qualname().qualifiedName());
    }
    // Configured by an earlier rewrite, with jitamp's executor, which may be
    // running: left as it is unless its graph needed rewriting now (a graph
    // edited since; PreoptimizeModule remakes both after other edits).
    if (!rewritten && holdsJitampsExecutor(graph_function)) {
      return;
    }
    // How the function runs is not saved with a model: set it whenever the
    // executor does not exist yet (a loaded model gets it from rewrite()).
    // PyTorch's built-in JIT autocast must never run on a rewritten graph
    // (it would add its own casts when the function is first called under
    // an eager autocast), even after jitamp.disable() turns it back on.
    graph_function._set_ignore_amp(true);
    // TorchScript's symbolic autodiff (differentiable subgraphs, built by
    // the profiling and the legacy executor) sums gradients in its own
    // order and runs an op's backward on the gradient its consumer gives,
    // uncast (ProfilingExecutorPlan): gradients may differ from eager's
    // in low bits. The simple executor records each op with eager's
    // autograd. Otherwise the executor is TorchScript's choice: forcing
    // the profiling one where the process has turned it off
    // (torch._C._jit_set_profiling_executor(False)) gave a hybrid whose
    // fallback functions are legacy executors, which crashed in training.
    if (options_.simple_executor) {
      graph_function._set_initial_executor_execution_mode(
          ExecutorExecutionMode::SIMPLE);
    }
    // Not a rewrite: how the function runs, as the executor mode above
    // (and so not listed as changed, nor refused once it has run).
    ConfigureRewrittenGraph(graph);
    // Its callees have theirs: rewrite() installed them above.
    installPlan(graph_function, options_.simple_executor);
  }

  // A function that has run may only be seen again if the rewrite has
  // nothing to do (already rewritten, or loaded rewritten). Its executor
  // keeps the graph it compiled and its graph must stay as it is: the one
  // question answered on a copy, asked only of functions that have run.
  static void checkMaySeeAgain(
      Function& function,
      GraphFunction& graph_function,
      Graph& graph,
      const std::vector<Function*>& callees) {
    TORCH_CHECK(
        !RewriteAutocast(graph.copy()),
        "jitamp cannot rewrite '",
        function.qualname().qualifiedName(),
        "': it has already run, and TorchScript's executor keeps the graph it "
        "compiled then. Call jitamp.enable() before torch.jit.script(), or "
        "jitamp.rewrite() after torch.jit.load() and before the first call.");
    // Nor may one that ran without jitamp's configuration while it holds
    // or inlines rewritten code (a copy made by Module::clone, code
    // scripted while jitamp was disabled that calls jitamp's): that call
    // raised (use_scope_ops_of_plans.h), and so would every other.
    TORCH_CHECK(
        holdsJitampsOptimizedGraph(graph_function) ||
            !runsRewrittenCode(graph, callees),
        "jitamp cannot configure '",
        function.qualname().qualifiedName(),
        "': it has already run without jitamp's configuration (TorchScript's "
        "executor, which keeps the graph it compiled then), and it holds or "
        "calls code rewritten by jitamp. Script it again with jitamp enabled "
        "(Python), or make a new copy and call jitamp::RewriteModule on it "
        "before its first call (C++).");
  }

  std::vector<std::string> changed() && {
    return std::move(changed_);
  }

 private:
  RewriteOptions options_;
  std::unordered_set<Function*> visited_;
  std::vector<std::string> changed_;
};

// installPlan again for functions whose graphs changed after
// their rewrite (fold_static_casts, strip_static_scopes, or a pass of
// torch.jit.optimize_for_inference), callees before callers. Only where
// jitamp's graph is installed and the function has not run: a function
// jitamp did not configure keeps TorchScript's preoptimization (with the
// built-in autocast pass, where that is on).
class GraphInstaller {
 public:
  void install(Function& function) {
    if (!function.isGraphFunction() || !visited_.insert(&function).second) {
      return;
    }
    auto& graph_function = toGraphFunction(function);
    graph_function.ensure_defined();
    std::vector<Function*> callees;
    collectCallees(graph_function.graph()->block(), callees);
    for (Function* callee : callees) {
      install(*callee);
    }
    if (!HasRun(function) && holdsJitampsOptimizedGraph(graph_function)) {
      installPlan(graph_function, holdsJitampsExecutor(graph_function));
    }
  }

 private:
  std::unordered_set<Function*> visited_;
};

} // namespace

std::vector<std::string> RewriteFunction(
    Function& function,
    RewriteOptions options) {
  FunctionRewriter rewriter(options);
  rewriter.rewrite(function);
  return std::move(rewriter).changed();
}

namespace {

// Whether jitamp has configured a function of `cu` already, so that the
// unit is not one a load has just compiled. The loader's __setstate__ also
// runs when a model is deep-copied (copy.deepcopy of a scripted module,
// Module::deepcopy, and Module::clone but for freezing's in-place one): the
// copy shares its class, and so its functions, with the original, which
// are configured already. In Python that unit is the one that holds every
// function scripted in the process, jitamp's or not, and a rewrite of it
// would change code jitamp was never asked to (or fail on code that has
// run). A second loader of one load (two rewritten models in one) finds the
// unit configured by the first.
bool configuredBefore(const CompilationUnit& cu) {
  for (Function* function : cu.get_functions()) {
    if (!function->isGraphFunction()) {
      continue;
    }
    auto& graph_function = toGraphFunction(*function);
    if (holdsJitampsExecutor(graph_function) ||
        holdsJitampsOptimizedGraph(graph_function)) {
      return true;
    }
  }
  return false;
}

} // namespace

std::vector<std::string> RewriteCompilationUnitOf(
    const c10::IValue& object,
    RewriteOptions options) {
  TORCH_CHECK(
      object.isObject(),
      "jitamp: expected a TorchScript object, got ",
      object.tagKind());
  const auto cu = object.toObjectRef().type()->compilation_unit();
  TORCH_CHECK(cu, "jitamp: the object's class has no compilation unit");
  if (configuredBefore(*cu)) {
    return {};
  }
  FunctionRewriter rewriter(options);
  for (Function* function : cu->get_functions()) {
    rewriter.rewrite(*function);
  }
  return std::move(rewriter).changed();
}

void PreoptimizeModule(const Module& module) {
  GraphInstaller installer;
  forEachMethod(module, [&](Function& method) { installer.install(method); });
}

std::vector<std::string> RewriteModule(
    const Module& module,
    RewriteOptions options) {
  FunctionRewriter rewriter(options);
  forEachMethod(module, [&](Function& method) { rewriter.rewrite(method); });
  return std::move(rewriter).changed();
}

} // namespace jitamp