// What jitamp's passes share: the symbols of the jitamp ops and a few
// questions about TorchScript IR. Header-only; included by the pass files.
#pragma once

#include <torch/csrc/jit/ir/ir.h>
#include <torch/custom_class_detail.h>

#include <string>
#include <unordered_map>
#include <unordered_set>

namespace jitamp {

// Symbols of the ops registered in library.cpp.
namespace ops {
// The symbol of the jitamp op `op`.
inline c10::Symbol named(const std::string& op) {
  return c10::Symbol::fromQualString("jitamp::" + op);
}
inline const c10::Symbol kEnter = named("autocast_enter");
inline const c10::Symbol kExit = named("autocast_exit");
inline const c10::Symbol kCacheEnabled = named("autocast_cache_enabled");
inline const c10::Symbol kCallerRegion = named("autocast_caller_region");
// What the two above become in the graphs jitamp's executors compile
// (passes/use_scope_ops_of_plans.h): the ops above raise when they run.
inline const c10::Symbol kEnterInPlan = named("autocast_enter_in_plan");
inline const c10::Symbol kCallerRegionInPlan =
    named("autocast_caller_region_in_plan");
inline const c10::Symbol kToFp16 = named("autocast_to_fp16");
inline const c10::Symbol kToFp32 = named("autocast_to_fp32");
inline const c10::Symbol kToFp16BeforeLoop =
    named("autocast_to_fp16_before_loop");
inline const c10::Symbol kPromote = named("autocast_promote");
inline const c10::Symbol kDependent = named("autocast_dependent");
inline const c10::Symbol kWaitPrepare = named("wait_prepare");
inline const c10::Symbol kWaitResume = named("wait_resume");
inline const c10::Symbol kTaskState = named("autocast_task_state");
inline const c10::Symbol kTaskStarted = named("autocast_task_started");
inline const c10::Symbol kTaskEnter = named("autocast_task_enter");
inline const c10::Symbol kTaskExit = named("autocast_task_exit");
inline const c10::Symbol kRaiseAsEager = named("raise_as_eager");
inline const c10::Symbol kSuspendAutocast = named("suspend_autocast");
inline const c10::Symbol kResumeAutocast = named("resume_autocast");
inline const c10::Symbol kIgnoreAmpInFallbacks =
    named("ignore_amp_in_fallbacks");
inline const c10::Symbol kMaxPool2d = named("max_pool2d");
// Plans only, registered in ops/direct_call.cpp: an op called with its
// autocast kernel's casts made by jitamp, and its attribute naming the op
// ("aten::mm", "aten::conv2d.padding").
inline const c10::Symbol kDirectCall = named("direct_call");
inline const c10::Symbol kDirectCallOp = c10::Symbol::attr("op");
// The smart casts (autocast_to_fp16 / autocast_to_fp32 of a Tensor) a direct
// call makes first, in this order, each of the argument at its position:
// the positions, whether each is autocast_to_fp32's, and its devices
// (passes/call_autocast_ops_directly.h).
inline const c10::Symbol kDirectCallCastArgs = c10::Symbol::attr("cast_args");
inline const c10::Symbol kDirectCallCastToFp32 =
    c10::Symbol::attr("cast_to_fp32");
inline const c10::Symbol kDirectCallCastDevices =
    c10::Symbol::attr("cast_devices");
} // namespace ops

// The TorchScript type of one of jitamp's classes (registered in
// library.cpp), e.g. jitampClass("AutocastGuard").
inline c10::TypePtr jitampClass(const std::string& name) {
  auto type = torch::getCustomClass("__torch__.torch.classes.jitamp." + name);
  TORCH_INTERNAL_ASSERT(type, "jitamp's op library is not loaded");
  return type;
}

// Whether `node` is one of jitamp's ops. (Symbol::ns() takes the interned
// strings' lock: asked once per kind and thread.)
inline bool isJitampOp(const torch::jit::Node* node) {
  static const c10::Symbol jitamp =
      c10::Symbol::fromQualString("namespaces::jitamp");
  thread_local std::unordered_map<c10::Symbol, bool> known;
  const c10::Symbol kind = node->kind();
  auto it = known.find(kind);
  if (it == known.end()) {
    it = known.emplace(kind, kind.ns() == jitamp).first;
  }
  return it->second;
}

// A scope's enter op, as saved or as in a plan.
inline bool isEnter(const torch::jit::Node* node) {
  return node->kind() == ops::kEnter || node->kind() == ops::kEnterInPlan;
}

// The caller region's token op, as saved or as in a plan.
inline bool isCallerRegion(const torch::jit::Node* node) {
  return node->kind() == ops::kCallerRegion ||
      node->kind() == ops::kCallerRegionInPlan;
}

// The scope ops as saved, each with what it becomes in jitamp's plans
// (passes/use_scope_ops_of_plans.h): as saved they raise when they run
// (library.cpp registers the raising kernel for the same schemas).
inline const std::unordered_map<c10::Symbol, c10::Symbol>& scopeOpsInPlans() {
  static const std::unordered_map<c10::Symbol, c10::Symbol> in_plans = {
      {ops::kEnter, ops::kEnterInPlan},
      {ops::kCallerRegion, ops::kCallerRegionInPlan}};
  return in_plans;
}

// Whether `node` is a scope op as saved, which raises outside jitamp's plans.
inline bool isScopeOpAsSaved(const torch::jit::Node* node) {
  return scopeOpsInPlans().count(node->kind()) != 0;
}

inline bool isSmartCast(const torch::jit::Node* node) {
  const auto kind = node->kind();
  return kind == ops::kToFp16 || kind == ops::kToFp32 || kind == ops::kPromote;
}

// Removes a smart cast (or a fold barrier): every form returns, in order,
// its first inputs (a list cast: the list).
inline void removeCast(torch::jit::Node* cast) {
  for (size_t i = 0; i < cast->outputs().size(); ++i) {
    cast->output(i)->replaceAllUsesWith(cast->input(i));
  }
  cast->destroy();
}

// Whether `node` reads the thread's autocast state: TorchScript's queries
// (aten::is_autocast_enabled, ...) and those ops/query_ops.cpp adds. Inside
// a scope, only the scope op before it makes the answer eager's.
inline bool isAutocastStateQuery(const torch::jit::Node* node) {
  static const std::unordered_set<std::string> queries = {
      "aten::is_autocast_enabled",       "aten::is_autocast_cpu_enabled",
      "aten::is_autocast_ipu_enabled",   "aten::is_autocast_xla_enabled",
      "aten::get_autocast_dtype",        "aten::get_autocast_cpu_dtype",
      "aten::get_autocast_gpu_dtype",    "aten::get_autocast_ipu_dtype",
      "aten::get_autocast_xla_dtype",    "aten::is_autocast_cache_enabled",
  };
  return node->kind().is_aten() &&
      queries.count(node->kind().toQualString()) != 0;
}

// prim::fork / prim::awaitable: nodes whose Subgraph runs as its own graph.
inline bool hasTaskSubgraph(const torch::jit::Node* node) {
  return (node->kind() == c10::prim::fork ||
          node->kind() == c10::prim::awaitable) &&
      node->hasAttribute(c10::attr::Subgraph);
}

// The first jitamp op of every rewritten graph (the cache flag of its first
// scope, or the caller's region token) gets a value name that says what to
// do: loading a saved model without `import jitamp` fails at that line, and
// TorchScript's error shows it ("Unknown builtin op: jitamp::...").
inline std::string loadHint(const char* what) {
  return std::string(what) + "_needs_import_jitamp";
}

// A new jitamp::autocast_caller_region at the top of `graph`: the token of
// the region of code outside any scope (an existing one is not reused: in
// a graph with inlined callees it may belong to code inside a scope).
inline torch::jit::Value* insertCallerRegion(torch::jit::Graph& graph) {
  torch::jit::WithInsertPoint guard(graph.block()->nodes().front());
  torch::jit::Node* region = graph.create(ops::kCallerRegion, {}, 1);
  region->output()->setType(c10::IntType::get());
  region->output()->setDebugName(loadHint("caller_region"));
  graph.insertNode(region);
  return region->output();
}

// The caller-region token of a plan, made at the first use (one per plan,
// shared by the passes that read it).
class CallerRegion {
 public:
  explicit CallerRegion(torch::jit::Graph& graph) : graph_(graph) {}
  torch::jit::Value* operator()() {
    if (value_ == nullptr) {
      value_ = insertCallerRegion(graph_);
    }
    return value_;
  }

 private:
  torch::jit::Graph& graph_;
  torch::jit::Value* value_ = nullptr;
};

// The autocast context-manager classes as TorchScript compiles them
// (torch.autocast, torch.amp / torch.cpu.amp / torch.cuda.amp .autocast),
// with the name mangling of models loaded from disk stripped.
inline bool isAutocastClass(const c10::TypePtr& type) {
  const auto cls = type->cast<c10::ClassType>();
  if (!cls || !cls->name()) {
    return false;
  }
  std::string name;
  for (const auto& atom : cls->name()->atoms()) {
    if (atom.rfind("___torch_mangle_", 0) == 0) {
      continue;
    }
    name += name.empty() ? atom : "." + atom;
  }
  return name == "__torch__.torch.amp.autocast_mode.autocast" ||
      name == "__torch__.torch.cpu.amp.autocast_mode.autocast" ||
      name == "__torch__.torch.cuda.amp.autocast_mode.autocast";
}

} // namespace jitamp
