#include "function_rewrite.h"

#include "fold_barriers.h"
#include "fold_static_casts.h"
#include "jitamp_ir.h"
#include "jitamp_rewrite.h"
#include "keep_loops_out_of_line.h"
#include "preoptimize.h"

#include <ATen/ops/empty.h>
#include <ATen/ops/equal.h>
#include <torch/csrc/jit/api/compilation_unit.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/frontend/error_report.h>
#include <torch/version.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>

namespace jitamp {

using namespace torch::jit;

namespace {

// jitamp reads and writes two private members of torch::jit::GraphFunction
// (below: optimized_graphs_, an array of shared_ptr<Graph>, and executors_,
// an array of optional GraphExecutor), reads one of torch::jit::
// GraphExecutor (pImpl), and calls GraphFunction's _set_ignore_amp /
// _set_initial_executor_execution_mode.
// All exist, with these meanings, in every torch this file is checked on.
static_assert(
    TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4 &&
        TORCH_VERSION_MINOR <= 15,
    "jitamp supports torch 2.4 to 2.15 (it reads GraphFunction internals in "
    "function_rewrite.cpp); this is torch " TORCH_VERSION
    ": check executors_ / optimized_graphs_ there and extend the range");

// GraphFunction keeps its executors and inlinable graphs private, and they
// are exactly what tells whether it has run. Standard C++ allows naming a
// private member in an explicit template instantiation; that is how we read
// them. The member types are deduced (c10::optional or std::optional,
// depending on the torch version), not copied from torch's layout.
template <typename Tag, auto Member>
struct PrivateMember {
  friend constexpr auto get(Tag) {
    return Member;
  }
};

struct ExecutorsTag {
  friend constexpr auto get(ExecutorsTag);
};
template struct PrivateMember<ExecutorsTag, &GraphFunction::executors_>;

struct OptimizedGraphsTag {
  friend constexpr auto get(OptimizedGraphsTag);
};
template struct PrivateMember<
    OptimizedGraphsTag,
    &GraphFunction::optimized_graphs_>;

struct ExecutorImplTag {
  friend constexpr auto get(ExecutorImplTag);
};
template struct PrivateMember<ExecutorImplTag, &GraphExecutor::pImpl>;

// TorchScript fills one slot of optimized_graphs_ (one per autocast
// specialization) at a time, with a graph of its own, when the function
// first runs, or a caller inlines it, under that specialization. jitamp
// fills every slot with the same graph (installOptimizedGraph): that is
// how its graph is told apart from TorchScript's.
bool holdsJitampsOptimizedGraph(GraphFunction& graph_function) {
  const auto& slots = graph_function.*get(OptimizedGraphsTag());
  static_assert(
      std::tuple_size_v<std::remove_reference_t<decltype(slots)>> > 1,
      "GraphFunction has one optimized graph: jitamp's cannot be told apart");
  const std::shared_ptr<Graph>& first = slots.front();
  if (!first) {
    return false;
  }
  for (const std::shared_ptr<Graph>& slot : slots) {
    if (slot != first) {
      return false;
    }
  }
  return true;
}

// The graph the function's executors compile and its callers inline,
// whatever the autocast state at its first call: jitamp's preoptimization
// of its graph (preoptimize.h), not TorchScript's. Its callees must have
// theirs already (Inline reads them). The graphs of all specializations are
// the same (with _set_ignore_amp, TorchScript's would not differ either).
void installOptimizedGraph(GraphFunction& graph_function) {
  const std::shared_ptr<Graph> optimized =
      PreoptimizedCopy(graph_function.graph());
  for (auto& slot : graph_function.*get(OptimizedGraphsTag())) {
    slot = optimized;
  }
}

// GraphFunction keeps one executor slot per specialization too, filled when
// the function first runs under it. jitamp fills every slot with one
// executor (installPlan): that is how its executor is told apart.
bool holdsJitampsExecutor(GraphFunction& graph_function) {
  const auto& slots = graph_function.*get(ExecutorsTag());
  if (!slots.front().has_value()) {
    return false;
  }
  const auto& impl = (*slots.front()).*get(ExecutorImplTag());
  for (const auto& slot : slots) {
    if (!slot.has_value() || (*slot).*get(ExecutorImplTag()) != impl) {
      return false;
    }
  }
  return true;
}

// installOptimizedGraph and, for the simple executor, the executor itself:
// built from SimpleExecutorPlan (preoptimize.h), in every slot, before
// TorchScript would build one from the optimized graph at the first call.
// (For the profiling executor TorchScript builds it then, from the
// optimized graph with ProfilingExecutorPlan's autodiff boundaries.)
void installPlan(GraphFunction& graph_function, bool simple_executor) {
  installOptimizedGraph(graph_function);
  if (!simple_executor) {
    ProfilingExecutorPlan((graph_function.*get(OptimizedGraphsTag())).front());
    return;
  }
  const GraphExecutor executor(
      SimpleExecutorPlan((graph_function.*get(OptimizedGraphsTag())).front()),
      graph_function.name(),
      ExecutorExecutionMode::SIMPLE);
  for (auto& slot : graph_function.*get(ExecutorsTag())) {
    slot = executor;
  }
}

void collectCallees(Block* block, std::vector<Function*>& callees) {
  for (Node* node : block->nodes()) {
    for (Block* sub : node->blocks()) {
      collectCallees(sub, callees);
    }
    if (hasTaskSubgraph(node)) {
      collectCallees(node->g(attr::Subgraph)->block(), callees);
    }
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
  }
}

// Whether `block` (or a block or task subgraph within) holds one of the
// ops that raise outside jitamp's plans (UseScopeOpsOfPlans, preoptimize.h).
bool holdsScopeOpAsSaved(Block* block) {
  for (Node* node : block->nodes()) {
    if (isScopeOpAsSaved(node)) {
      return true;
    }
    for (Block* sub : node->blocks()) {
      if (holdsScopeOpAsSaved(sub)) {
        return true;
      }
    }
    if (hasTaskSubgraph(node) &&
        holdsScopeOpAsSaved(node->g(attr::Subgraph)->block())) {
      return true;
    }
  }
  return false;
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
            (graph_function.*get(OptimizedGraphsTag())).front()->block())) {
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
    const bool has_run = HasRun(function);
    // Configured by an earlier rewrite, with jitamp's executor, which may be
    // running: left as it is unless its graph needs rewriting now (a graph
    // edited since; PreoptimizeModule remakes both after other edits).
    if (!has_run && holdsJitampsExecutor(graph_function) &&
        !RewriteAutocast(graph->copy())) {
      return;
    }
    // A function that has run may only be seen again if the rewrite has
    // nothing to do (already rewritten, or loaded rewritten): find out on a
    // copy, since its executor keeps the graph it compiled.
    TORCH_CHECK(
        !has_run || !RewriteAutocast(graph->copy()),
        "jitamp cannot rewrite '",
        function.qualname().qualifiedName(),
        "': it has already run, and TorchScript's executor keeps the graph it "
        "compiled then. Call jitamp.enable() before torch.jit.script(), or "
        "jitamp.rewrite() after torch.jit.load() and before the first call.");
    // Nor may one that ran without jitamp's configuration while it holds
    // or inlines rewritten code (a copy made by Module::clone, code
    // scripted while jitamp was disabled that calls jitamp's): that call
    // raised (UseScopeOpsOfPlans, preoptimize.h), and so would every other.
    TORCH_CHECK(
        !has_run || holdsJitampsOptimizedGraph(graph_function) ||
            !runsRewrittenCode(*graph, callees),
        "jitamp cannot configure '",
        function.qualname().qualifiedName(),
        "': it has already run without jitamp's configuration (TorchScript's "
        "executor, which keeps the graph it compiled then), and it holds or "
        "calls code rewritten by jitamp. Script it again with jitamp enabled "
        "(Python), or make a new copy and call jitamp::RewriteModule on it "
        "before its first call (C++).");
    if (!has_run) {
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
    }
    if (!has_run && RewriteAutocast(graph)) {
      changed_.push_back(function.qualname().qualifiedName());
    }
    if (!has_run) {
      // Not a rewrite: how the function runs, as the executor mode above
      // (and so not listed as changed, nor refused once it has run).
      KeepLoopsOutOfLine(graph);
      // Its callees have theirs: rewrite() installed them above.
      installPlan(graph_function, options_.simple_executor);
    }
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

  void installModule(const Module& module) {
    for (Function* method : module.type()->methods()) {
      install(*method);
    }
    for (const Module& child : module.children()) {
      installModule(child);
    }
  }

 private:
  std::unordered_set<Function*> visited_;
};

void rewriteModuleInto(const Module& module, FunctionRewriter& rewriter) {
  for (Function* method : module.type()->methods()) {
    rewriter.rewrite(*method);
  }
  for (const Module& child : module.children()) {
    rewriteModuleInto(child, rewriter);
  }
}

} // namespace

bool HasRun(Function& function) {
  if (!function.isGraphFunction()) {
    return false;
  }
  auto& graph_function = toGraphFunction(function);
  if (holdsJitampsExecutor(graph_function)) {
    return false;
  }
  for (const auto& executor : graph_function.*get(ExecutorsTag())) {
    if (executor.has_value()) {
      return true;
    }
  }
  if (holdsJitampsOptimizedGraph(graph_function)) {
    return false;
  }
  for (const std::shared_ptr<Graph>& slot :
       graph_function.*get(OptimizedGraphsTag())) {
    if (slot) {
      return true;
    }
  }
  return false;
}

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

namespace {

void foldModuleInto(
    const Module& module,
    std::unordered_set<Function*>& visited,
    std::vector<std::string>& changed) {
  for (Function* method : module.type()->methods()) {
    if (!method->isGraphFunction() || !visited.insert(method).second) {
      continue;
    }
    auto& graph_function = toGraphFunction(*method);
    graph_function.ensure_defined();
    const std::shared_ptr<Graph> graph = graph_function.graph();
    TORCH_CHECK(
        !HasRun(*method) || !FoldStaticCasts(graph->copy()),
        "jitamp cannot fold the casts of '",
        method->qualname().qualifiedName(),
        "': it has already run, and TorchScript's executor keeps the graph it "
        "compiled then. Fold right after torch.jit.freeze(), before the first "
        "call.");
    if (FoldStaticCasts(graph)) {
      changed.push_back(method->qualname().qualifiedName());
    }
  }
  for (const Module& child : module.children()) {
    foldModuleInto(child, visited, changed);
  }
}

// torch.jit.freeze inlines the module's methods into the ones it keeps,
// then deletes every method of the frozen module's types that it no longer
// needs (CompilationUnit::unsafeRemoveMethod frees the Function). The
// inlined nodes keep a raw pointer to each of those Functions in their
// InlinedCallStack, and the interpreter reads its name when it reports an
// error raised in inlined code: a use after free, in every torch jitamp
// supports (a wrong frame name in the error, or a crash; found by the
// fuzzer on frozen jitamp models, seen in plain TorchScript too). What
// follows points each call-stack entry whose method its class no longer
// has at a Function of the same name that lives as long as the process.
class FrozenCallStackRepair {
 public:
  void repairModule(const Module& module) {
    for (Function* method : module.type()->methods()) {
      if (method->isGraphFunction()) {
        repairBlock(toGraphFunction(*method).graph()->block());
      }
    }
    for (const Module& child : module.children()) {
      repairModule(child);
    }
  }

 private:
  void repairBlock(Block* block) {
    for (Node* node : block->nodes()) {
      for (Block* sub : node->blocks()) {
        repairBlock(sub);
      }
      if (hasTaskSubgraph(node)) {
        repairBlock(node->g(attr::Subgraph)->block());
      }
      if (auto callstack = node->callstack()) {
        InlinedCallStackPtr fixed = repaired(*callstack);
        if (fixed.get() != callstack->get()) {
          node->setCallStack(std::move(fixed));
        }
      }
    }
  }

  // Inlining a method records the class it was called on; a method the
  // class still has is alive. Free functions (no class) are never deleted
  // by freezing. Only pointers are compared: nothing is read from `fn`.
  static bool deleted(const InlinedCallStack& entry) {
    Function* fn = entry.function();
    const auto instance = entry.module_instance();
    if (fn == nullptr || !instance || !instance->class_type()) {
      return false;
    }
    const auto& methods = instance->class_type()->methods();
    return std::find(methods.begin(), methods.end(), fn) == methods.end();
  }

  // One Function per name, never freed: all the interpreter asks of it is
  // its name.
  static Function* standIn(const std::string& name) {
    static std::mutex mutex;
    static auto* stand_ins =
        new std::unordered_map<std::string, std::unique_ptr<GraphFunction>>();
    const std::lock_guard<std::mutex> guard(mutex);
    auto& stand_in = (*stand_ins)[name];
    if (!stand_in) {
      stand_in = std::make_unique<GraphFunction>(
          c10::QualifiedName(c10::QualifiedName("__jitamp_freed__"), name),
          std::make_shared<Graph>(),
          nullptr);
    }
    return stand_in.get();
  }

  // The same list with deleted methods replaced; shared tails stay shared
  // (memo), unchanged lists are returned as they are.
  InlinedCallStackPtr repaired(const InlinedCallStackPtr& entry) {
    if (auto it = memo_.find(entry.get()); it != memo_.end()) {
      return it->second.second;
    }
    const auto callee = entry->callee();
    std::optional<InlinedCallStackPtr> new_callee;
    if (callee) {
      new_callee = repaired(*callee);
    }
    const bool dead = deleted(*entry);
    InlinedCallStackPtr result = entry;
    if (dead || (callee && new_callee->get() != callee->get())) {
      Function* fn = dead ? standIn(entry->function_name()) : entry->function();
      std::string name = entry->function_name();
      result = new_callee
          ? c10::make_intrusive<InlinedCallStack>(
                *new_callee,
                fn,
                entry->source_range(),
                entry->module_instance(),
                name)
          : c10::make_intrusive<InlinedCallStack>(
                fn, entry->source_range(), entry->module_instance(), name);
    }
    memo_.emplace(entry.get(), std::make_pair(entry, result));
    return result;
  }

  // original -> (original, repaired): holding the original keeps its
  // address from being reused while the walk runs
  std::unordered_map<
      const InlinedCallStack*,
      std::pair<InlinedCallStackPtr, InlinedCallStackPtr>>
      memo_;
};

} // namespace

std::vector<std::string> FoldStaticCastsInModule(const Module& module) {
  FrozenCallStackRepair().repairModule(module);
  std::unordered_set<Function*> visited;
  std::vector<std::string> changed;
  foldModuleInto(module, visited, changed);
  KeepConstantsApartInModule(module);
  PreoptimizeModule(module);
  return changed;
}

namespace {

// Whether TorchScript's constant pooling merges two tensor constants whose
// values have no complete type to tell them apart (node_hashing.cpp's
// tensorEqual: dtype, device and layout kind, then equal values), however
// their elements are laid out.
bool pooledTogether(const at::Tensor& a, const at::Tensor& b) {
  const auto plain = [](const at::Tensor& t) {
    return t.layout() == at::kStrided && !t.is_quantized() && !t.is_nested();
  };
  return plain(a) && plain(b) && a.scalar_type() == b.scalar_type() &&
      a.device() == b.device() && a.sizes() == b.sizes() && at::equal(a, b);
}

bool sameLayout(const at::Tensor& a, const at::Tensor& b) {
  return a.strides() == b.strides() && a.storage_offset() == b.storage_offset();
}

void collectTensorConstants(Block* block, std::vector<Node*>& constants) {
  for (Node* node : block->nodes()) {
    if (node->kind() == prim::Constant && node->hasAttribute(attr::value) &&
        node->kindOf(attr::value) == AttributeKind::t) {
      constants.push_back(node);
    }
    for (Block* sub : node->blocks()) {
      collectTensorConstants(sub, constants);
    }
  }
}

// The tensor constants of `graph` that pooling would merge with an earlier
// one laid out otherwise.
std::vector<Node*> constantsPooledAcrossLayouts(Graph& graph) {
  std::vector<Node*> constants;
  collectTensorConstants(graph.block(), constants);
  std::vector<Node*> firsts; // one per class of constants pooled together
  std::vector<Node*> apart;
  for (Node* constant : constants) {
    const at::Tensor& value = constant->t(attr::value);
    const auto first =
        std::find_if(firsts.begin(), firsts.end(), [&](const Node* other) {
          return pooledTogether(other->t(attr::value), value);
        });
    if (first == firsts.end()) {
      firsts.push_back(constant);
    } else if (!sameLayout((*first)->t(attr::value), value)) {
      apart.push_back(constant);
    }
  }
  return apart;
}

} // namespace

bool KeepConstantsApartInModule(const Module& module) {
  Module handle = module; // register_attribute is not const
  bool changed = false;
  size_t next = 0;
  for (const Method& method : module.get_methods()) {
    Function& function = method.function();
    std::shared_ptr<Graph> graph = toGraphFunction(function).graph();
    const std::vector<Node*> apart = constantsPooledAcrossLayouts(*graph);
    if (apart.empty()) {
      continue;
    }
    TORCH_CHECK(
        !HasRun(function),
        "jitamp cannot keep the constants of '",
        function.qualname().qualifiedName(),
        "' apart: it has already run. Freeze it again, before the first call.");
    Value* self = graph->inputs().at(0);
    TORCH_INTERNAL_ASSERT(self->type() == module.type());
    for (Node* constant : apart) {
      std::string name;
      do {
        name = "_pooled_apart_constant_" + std::to_string(next++);
      } while (handle.hasattr(name));
      handle.register_attribute(
          name, TensorType::get(), constant->t(attr::value));
      Node* get = graph->createGetAttr(self, name)->insertBefore(constant);
      get->output()->setType(constant->output()->type());
      get->setSourceRange(constant->sourceRange());
      constant->output()->replaceAllUsesWith(get->output());
      constant->destroy();
    }
    changed = true;
  }
  return changed;
}

namespace {

// KeepAddmmWholeInModule's walk: replaces the constant beta of each addmm
// DecomposeOps would split by a read of `module`'s attribute holding it.
bool readBetasFromAttributes(Block* block, Value* self, Module& module) {
  bool changed = false;
  for (Node* node : block->nodes()) {
    for (Block* sub : node->blocks()) {
      changed |= readBetasFromAttributes(sub, self, module);
    }
    if (!decomposableAddmm(node)) {
      continue;
    }
    Value* beta = node->namedInput(attr::beta);
    const std::optional<IValue> constant = toIValue(beta);
    if (!constant.has_value() || !toIValue(node->namedInput(attr::alpha))) {
      continue; // not split: beta or alpha is computed
    }
    const std::string name = "_unsplit_addmm_beta_" + beta->type()->str();
    module.register_attribute(name, beta->type(), *constant);
    Node* get = node->owningGraph()->createGetAttr(self, name);
    get->insertBefore(node);
    get->setSourceRange(node->sourceRange());
    node->replaceInput(*node->schema().argumentIndexWithName("beta"),
                       get->output());
    changed = true;
  }
  return changed;
}

} // namespace

bool KeepAddmmWholeInModule(const Module& module) {
  Module handle = module; // register_attribute is not const
  bool changed = false;
  for (const Method& method : module.get_methods()) {
    std::shared_ptr<Graph> graph = toGraphFunction(method.function()).graph();
    Value* self = graph->inputs().at(0);
    TORCH_INTERNAL_ASSERT(self->type() == module.type());
    changed |= readBetasFromAttributes(graph->block(), self, handle);
  }
  return changed;
}

namespace {

// Whether the top level of `graph` reads the guard's flag already.
bool hasGuard(Graph& graph, const std::string& name) {
  for (Node* node : graph.nodes()) {
    if (node->kind() == prim::GetAttr && node->s(attr::name) == name) {
      return true;
    }
  }
  return false;
}

bool containsMM(Block* block) {
  for (Node* node : block->nodes()) {
    if (node->kind() == aten::mm) {
      return true;
    }
    for (Block* sub : node->blocks()) {
      if (containsMM(sub)) {
        return true;
      }
    }
  }
  return false;
}

} // namespace

bool KeepMMsUnbatchedInModule(const Module& module) {
  static const char* const kNever = "_unbatched_mm_guard";
  static const char* const kTensor = "_unbatched_mm_guard_tensor";
  Module handle = module; // register_attribute is not const
  bool changed = false;
  for (const Method& method : module.get_methods()) {
    std::shared_ptr<Graph> graph = toGraphFunction(method.function()).graph();
    if (!containsMM(graph->block()) || hasGuard(*graph, kNever)) {
      continue; // no mm, or guarded (idempotent)
    }
    if (!handle.hasattr(kNever)) {
      handle.register_attribute(kNever, BoolType::get(), false);
      handle.register_attribute(
          kTensor, TensorType::get(), at::empty({0}, at::kFloat));
    }
    Value* self = graph->inputs().at(0);
    TORCH_INTERNAL_ASSERT(self->type() == module.type());
    // if self._unbatched_mm_guard: self._unbatched_mm_guard_tensor.zero_()
    WithInsertPoint at_start(graph->block()->nodes().front());
    Value* never = graph->insertNode(graph->createGetAttr(self, kNever))
                       ->output();
    Node* guard = graph->create(prim::If, {never}, /*num_outputs=*/0);
    graph->insertNode(guard);
    Block* taken = guard->addBlock();
    guard->addBlock();
    WithInsertPoint in_taken(taken);
    Value* tensor = graph->insertNode(graph->createGetAttr(self, kTensor))
                        ->output();
    graph->insert(aten::zero_, {tensor});
    changed = true;
  }
  return changed;
}

void PreoptimizeModule(const Module& module) {
  GraphInstaller().installModule(module);
}

std::vector<std::string> RewriteModule(
    const Module& module,
    RewriteOptions options) {
  FunctionRewriter rewriter(options);
  rewriteModuleInto(module, rewriter);
  return std::move(rewriter).changed();
}

} // namespace jitamp
