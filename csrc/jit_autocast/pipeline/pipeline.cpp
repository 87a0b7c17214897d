// jitamp's pipelines, each a table of steps run in order. The tables are
// the one list of passes (PipelineSteps).
#include "pipeline/pipeline.h"

#include "ir/block_walk.h"
#include "ir/fold_barriers.h"
#include "ir/graph_function_state.h"
#include "ir/jitamp_ir.h"
#include "passes/call_autocast_ops_directly.h"
#include "passes/carry_autocast_into_tasks.h"
#include "passes/explicit_scopes_for_export.h"
#include "profiling/expose_static_casts_to_fuser.h"
#include "passes/fold_static_casts.h"
#include "passes/hoist_loop_casts.h"
#include "profiling/ignore_amp_in_fallbacks.h"
#include "profiling/insert_autodiff_boundaries.h"
#include "passes/insert_smart_casts.h"
#include "passes/keep_autocast_state_across_waits.h"
#include "passes/keep_addmm_whole.h"
#include "passes/keep_constants_apart.h"
#include "repairs/keep_ifs_out_of_line.h"
#include "repairs/keep_loops_out_of_line.h"
#include "passes/keep_mms_unbatched.h"
#include "passes/lower_autocast_scopes.h"
#include "passes/peephole_keeping_transposes.h"
#include "passes/pool_channels_last.h"
#include "passes/record_autocast_cache_flags.h"
#include "passes/remove_casts_of_none.h"
#include "passes/remove_kernel_casts.h"
#include "repairs/repair_value_scopes.h"
#include "repairs/restore_exits_cut_by_raises.h"
#include "passes/strip_static_scopes.h"
#include "profiling/suspend_autocast_around_fallbacks.h"
#include "passes/use_scope_ops_of_plans.h"
#include "repairs/repair_frozen_call_stacks.h"
#include "pipeline/function_rewrite.h"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/jit_log.h>
#include <torch/csrc/jit/passes/constant_pooling.h>
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/passes/loop_unrolling.h>
#include <torch/csrc/jit/passes/pass_manager.h>

#include <functional>
#include <map>
#include <unordered_set>
#include <utility>

namespace jitamp {

using namespace torch::jit;

namespace {

// What the steps of one graph pipeline share.
struct GraphRun {
  explicit GraphRun(std::shared_ptr<Graph> graph_)
      : graph(std::move(graph_)), region(*graph) {}
  std::shared_ptr<Graph> graph;
  CallerRegion region; // the plan's caller-region token, made once
  std::vector<std::shared_ptr<Graph>> tasks; // fork subgraphs met
};

struct GraphStep {
  const char* name;
  const char* header;
  bool (*run)(GraphRun&);
};

// A pass that takes the graph alone.
template <bool (*Pass)(const std::shared_ptr<Graph>&)>
bool onGraph(GraphRun& run) {
  return Pass(run.graph);
}

using Steps = std::vector<GraphStep>;

const Steps& rewriteSteps() {
  static const Steps steps = {
      {"repair_value_scopes", "repairs/repair_value_scopes.h",
       onGraph<RepairValueScopes>},
      {"use_scope_ops_as_saved", "passes/use_scope_ops_of_plans.h",
       onGraph<UseScopeOpsAsSaved>},
      {"restore_exits_cut_by_raises", "repairs/restore_exits_cut_by_raises.h",
       onGraph<RestoreExitsCutByRaises>},
      {"record_autocast_cache_flags", "passes/record_autocast_cache_flags.h",
       onGraph<RecordAutocastCacheFlags>},
      {"lower_autocast_scopes", "passes/lower_autocast_scopes.h",
       onGraph<LowerAutocastScopes>},
      {"keep_autocast_state_across_waits",
       "passes/keep_autocast_state_across_waits.h",
       onGraph<KeepAutocastStateAcrossWaits>},
      {"carry_autocast_into_tasks", "passes/carry_autocast_into_tasks.h",
       onGraph<CarryAutocastIntoTasks>},
      // Collects the fork subgraphs as its walk meets them (one walk fewer).
      {"insert_smart_casts", "passes/insert_smart_casts.h",
       [](GraphRun& run) { return InsertSmartCasts(run.graph, &run.tasks); }},
  };
  return steps;
}

const Steps& configureSteps() {
  static const Steps steps = {
      {"keep_loops_out_of_line", "repairs/keep_loops_out_of_line.h",
       onGraph<KeepLoopsOutOfLine>},
  };
  return steps;
}

// TorchScript's preoptimizeGraph (torch/csrc/jit/api/function_impl.cpp) with, after
// inlining, the casts of None gone, and with x.t().t() kept (docs/passes.md).
const Steps& preoptimizeSteps() {
  static const Steps steps = {
      {"inline", "torch/csrc/jit/passes/inliner.h",
       [](GraphRun& run) { return Inline(*run.graph), true; }},
      {"remove_casts_of_none", "passes/remove_casts_of_none.h",
       onGraph<RemoveCastsOfNone>},
      {"peephole_keeping_transposes", "passes/peephole_keeping_transposes.h",
       onGraph<PeepholeKeepingTransposes>},
      {"constant_propagation_immutable_types",
       "torch/csrc/jit/passes/constant_propagation.h",
       [](GraphRun& run) {
         return ConstantPropagationImmutableTypes(run.graph);
       }},
      {"constant_pooling", "torch/csrc/jit/passes/constant_pooling.h",
       [](GraphRun& run) { return ConstantPooling(run.graph), true; }},
  };
  return steps;
}

const Steps& simplePlanSteps() {
  static const Steps steps = {
      {"remove_fold_barriers", "ir/fold_barriers.h",
       [](GraphRun& run) { return removeAllFoldBarriers(run.graph->block()); }},
      {"hoist_loop_casts", "passes/hoist_loop_casts.h",
       onGraph<HoistLoopCasts>},
      {"remove_kernel_casts", "passes/remove_kernel_casts.h",
       onGraph<RemoveKernelCasts>},
      // TorchScript's optimized plans unroll loops (by 8, or whole for a
      // constant trip count under 64; bodies of 32 nodes at most): the
      // same ops in the same order, without the interpreter's work per
      // iteration. After the casts' loop-based choices above.
      {"unroll_loops", "torch/csrc/jit/passes/loop_unrolling.h",
       [](GraphRun& run) { return UnrollLoops(run.graph); }},
      // Removing casts or unrolling can line a loop up with the node that
      // reads its result.
      {"keep_loops_out_of_line_in_plan", "repairs/keep_loops_out_of_line.h",
       onGraph<KeepLoopsOutOfLineInPlan>},
      {"keep_ifs_out_of_line", "repairs/keep_ifs_out_of_line.h",
       onGraph<KeepIfsOutOfLine>},
      {"use_scope_ops_of_plans", "passes/use_scope_ops_of_plans.h",
       onGraph<UseScopeOpsOfPlans>},
      // The nodes it makes are opaque to any pass after it.
      {"call_autocast_ops_directly", "passes/call_autocast_ops_directly.h",
       onGraph<CallAutocastOpsDirectly>},
      // Last: the caller's region token is for passes.
      {"caller_regions_as_constants", "passes/use_scope_ops_of_plans.h",
       onGraph<CallerRegionsAsConstants>},
  };
  return steps;
}

const Steps& profilingPlanSteps() {
  static const Steps steps = {
      {"insert_autodiff_boundaries", "profiling/insert_autodiff_boundaries.h",
       [](GraphRun& run) {
         return InsertAutodiffBoundaries(run.graph, run.region);
       }},
      {"keep_addmm_whole", "passes/keep_addmm_whole.h",
       [](GraphRun& run) { return KeepAddmmWhole(run.graph, run.region); }},
      {"keep_ifs_out_of_line", "repairs/keep_ifs_out_of_line.h",
       onGraph<KeepIfsOutOfLine>},
      {"ignore_amp_in_fallbacks", "profiling/ignore_amp_in_fallbacks.h",
       onGraph<IgnoreAmpInFallbacks>},
      {"use_scope_ops_of_plans", "passes/use_scope_ops_of_plans.h",
       onGraph<UseScopeOpsOfPlans>},
  };
  return steps;
}

// jitamp.export's graph (a rewritten copy's forward): inlined, regions as
// torch.export takes them, the autocast objects' checks folded away.
const Steps& exportSteps() {
  static const Steps steps = {
      {"inline", "torch/csrc/jit/passes/inliner.h",
       [](GraphRun& run) { return Inline(*run.graph), true; }},
      {"explicit_scopes_for_export", "passes/explicit_scopes_for_export.h",
       onGraph<ExplicitScopesForExport>},
      {"constant_propagation", "torch/csrc/jit/passes/constant_propagation.h",
       [](GraphRun& run) { return ConstantPropagation(run.graph); }},
      {"eliminate_dead_code", "torch/csrc/jit/passes/dead_code_elimination.h",
       [](GraphRun& run) { return EliminateDeadCode(run.graph), true; }},
  };
  return steps;
}

// Passes TorchScript's profiling executor runs on its optimized plans,
// registered with RegisterPass's custom passes below.
const Steps& registeredPreFusionSteps() {
  static const Steps steps = {
      // Where enabled (FuserCastsEnabled).
      {"expose_static_casts_to_fuser", "profiling/expose_static_casts_to_fuser.h",
       onGraph<ExposeStaticCastsToFuser>},
  };
  return steps;
}

const Steps& registeredPostFusionSteps() {
  static const Steps steps = {
      {"suspend_autocast_around_fallbacks",
       "profiling/suspend_autocast_around_fallbacks.h",
       onGraph<SuspendAutocastAroundFallbacks>},
  };
  return steps;
}

bool runSteps(const Steps& steps, GraphRun& run);

const GraphPassNameType kPreFusionPasses =
    registerPrePass([](std::shared_ptr<Graph>& graph) {
      if (FuserCastsEnabled()) {
        GraphRun run(graph);
        runSteps(registeredPreFusionSteps(), run);
      }
    });
const GraphPassNameType kPostFusionPasses =
    registerPostPass([](std::shared_ptr<Graph>& graph) {
      GraphRun run(graph);
      runSteps(registeredPostFusionSteps(), run);
    });

bool runSteps(const Steps& steps, GraphRun& run) {
  bool changed = false;
  for (const GraphStep& step : steps) {
    changed |= step.run(run);
  }
  return changed;
}

// The module pipelines. What their steps share:
struct ModuleRun {
  Module module;
  bool simple_executor = true;
  // optimize_for_inference's methods besides forward
  std::vector<std::string> other_methods;
  std::vector<std::string> changed; // methods whose casts were folded
};

struct ModuleStep {
  const char* name;
  const char* header;
  void (*run)(ModuleRun&);
  // The graph pass the step runs on each method, where it also runs alone
  // on one method's graph (RunGraphPasses); null where it does not.
  bool (*on_graph)(const std::shared_ptr<Graph>&) = nullptr;
};

using ModuleSteps = std::vector<ModuleStep>;

// The fold of every method of `module` and its submodules; adds the
// qualified names of those it changed to `changed`.
void foldModule(const Module& module, std::vector<std::string>& changed) {
  std::unordered_set<Function*> visited;
  forEachMethod(module, [&](Function& method) {
    if (!method.isGraphFunction() || !visited.insert(&method).second) {
      return;
    }
    auto& graph_function = toGraphFunction(method);
    graph_function.ensure_defined();
    const std::shared_ptr<Graph> graph = graph_function.graph();
    TORCH_CHECK(
        !HasRun(method) || !FoldStaticCasts(graph->copy()),
        "jitamp cannot fold the casts of '",
        method.qualname().qualifiedName(),
        "': it has already run, and TorchScript's executor keeps the graph it "
        "compiled then. Fold right after torch.jit.freeze(), before the first "
        "call.");
    if (FoldStaticCasts(graph)) {
      changed.push_back(method.qualname().qualifiedName());
    }
  });
}

// The methods of `module` itself (a frozen module's code is all there).
std::vector<std::pair<std::string, std::shared_ptr<Graph>>> methodGraphs(
    const Module& module) {
  std::vector<std::pair<std::string, std::shared_ptr<Graph>>> graphs;
  for (const Method& method : module.get_methods()) {
    graphs.emplace_back(
        method.name(), toGraphFunction(method.function()).graph());
  }
  return graphs;
}

// Raises ValueError naming every line that needs jitamp's ops, with how
// often it occurs (an unrolled loop repeats its body's).
void checkNoObstacles(const Module& module) {
  std::vector<std::string> lines;
  std::map<std::string, size_t> counts;
  for (const auto& [name, graph] : methodGraphs(module)) {
    for (const std::string& obstacle : StaticScopeObstacles(graph)) {
      const std::string line = name + ": " + obstacle;
      if (counts[line]++ == 0) {
        lines.push_back(line);
      }
    }
  }
  if (lines.empty()) {
    return;
  }
  std::string message =
      "jitamp.freeze(standalone=True): the frozen model needs jitamp's ops:";
  for (const std::string& line : lines) {
    message += "\n  " + line;
    if (counts[line] > 1) {
      message += " (" + std::to_string(counts[line]) + " times)";
    }
  }
  TORCH_CHECK_VALUE(false, message);
}

// The frozen copy rewritten and configured as the module it was made from
// (torch.jit.freeze makes new functions, which run as TorchScript's
// defaults say). Idempotent on the rewritten graphs it copied.
const ModuleStep kRewriteModule = {
    "rewrite_module", "pipeline/function_rewrite.h", [](ModuleRun& run) {
      RewriteModule(run.module, RewriteOptions{run.simple_executor});
    }};

const ModuleStep kPreoptimizeModule = {
    "preoptimize_module", "pipeline/function_rewrite.h",
    [](ModuleRun& run) { PreoptimizeModule(run.module); }};

// What a frozen model with jitamp's ops ends with (not standalone ones).
const ModuleSteps kEndWithJitampOps = {
    {"pool_channels_last", "passes/pool_channels_last.h",
     [](ModuleRun& run) { PoolChannelsLastInModule(run.module); },
     PoolChannelsLast},
    kPreoptimizeModule,
};

// A freeze pipeline: `before`, the casts of frozen weights done, `after`.
ModuleSteps folding(ModuleSteps before, const ModuleSteps& after) {
  const ModuleSteps fold = {
      {"repair_frozen_call_stacks", "repairs/repair_frozen_call_stacks.h",
       [](ModuleRun& run) { RepairFrozenCallStacks(run.module); }},
      {"fold_static_casts", "passes/fold_static_casts.h",
       [](ModuleRun& run) { foldModule(run.module, run.changed); },
       FoldStaticCasts},
      {"keep_constants_apart", "passes/keep_constants_apart.h",
       [](ModuleRun& run) { KeepConstantsApartInModule(run.module); }},
  };
  before.insert(before.end(), fold.begin(), fold.end());
  before.insert(before.end(), after.begin(), after.end());
  return before;
}

const ModuleSteps& freezeSteps() {
  static const ModuleSteps steps =
      folding({kRewriteModule}, kEndWithJitampOps);
  return steps;
}

// torch.jit.optimize_for_inference's own passes run after the rewrite (a
// rewrite after them would cast the ops they make) and before the fold, so
// they see the graph they see without it: weights behind their casts (no
// MKLDNN repacking or linear concatenation of cast weights, whose numerics
// are not eager's).
const ModuleSteps& optimizeForInferenceSteps() {
  static const ModuleSteps steps = folding(
      {kRewriteModule,
       {"torch_optimize_for_inference", "torch/csrc/jit/api/module.h",
        [](ModuleRun& run) {
          optimize_for_inference(run.module, run.other_methods);
        }}},
      kEndWithJitampOps);
  return steps;
}

const ModuleSteps& standaloneSteps() {
  static const ModuleSteps steps = folding(
      {kRewriteModule},
      {
          kPreoptimizeModule,
          {"static_scope_obstacles", "passes/strip_static_scopes.h",
           [](ModuleRun& run) { checkNoObstacles(run.module); }},
          {"strip_static_scopes", "passes/strip_static_scopes.h",
           [](ModuleRun& run) {
             for (const auto& entry : methodGraphs(run.module)) {
               StripStaticScopes(entry.second);
             }
           },
           StripStaticScopes},
          // Stock executors run it: keep what they would split apart whole.
          {"keep_addmm_whole_in_module", "passes/keep_addmm_whole.h",
           [](ModuleRun& run) { KeepAddmmWholeInModule(run.module); }},
          {"keep_mms_unbatched", "passes/keep_mms_unbatched.h",
           [](ModuleRun& run) { KeepMMsUnbatchedInModule(run.module); }},
          kPreoptimizeModule,
      });
  return steps;
}

void runSteps(const ModuleSteps& steps, ModuleRun& run) {
  for (const ModuleStep& step : steps) {
    step.run(run);
  }
}

// Every graph pipeline by name, in the order PipelineSteps lists them.
const std::vector<std::pair<const char*, const Steps*>>& graphPipelines() {
  static const std::vector<std::pair<const char*, const Steps*>> all = {
      {"rewrite", &rewriteSteps()},
      {"configure", &configureSteps()},
      {"preoptimize", &preoptimizeSteps()},
      {"simple_executor_plan", &simplePlanSteps()},
      {"profiling_executor_plan", &profilingPlanSteps()},
      {"export", &exportSteps()},
      {"registered", &registeredPreFusionSteps()},
      {"registered", &registeredPostFusionSteps()},
  };
  return all;
}

const std::vector<std::pair<const char*, const ModuleSteps*>>&
modulePipelines() {
  static const std::vector<std::pair<const char*, const ModuleSteps*>> all = {
      {"freeze", &freezeSteps()},
      {"optimize_for_inference", &optimizeForInferenceSteps()},
      {"standalone_freeze", &standaloneSteps()},
  };
  return all;
}

} // namespace

bool RewriteAutocast(const std::shared_ptr<Graph>& graph) {
  GraphRun run(graph);
  bool changed = runSteps(rewriteSteps(), run);
  for (const auto& task : run.tasks) {
    changed |= RewriteAutocast(task);
  }
  if (changed) {
    GRAPH_DUMP("After jitamp's autocast rewrite:", graph);
  }
  return changed;
}

bool ConfigureRewrittenGraph(const std::shared_ptr<Graph>& graph) {
  GraphRun run(graph);
  return runSteps(configureSteps(), run);
}

std::shared_ptr<Graph> PreoptimizedCopy(const std::shared_ptr<Graph>& graph) {
  GraphRun run(graph->copy());
  runSteps(preoptimizeSteps(), run);
  return run.graph;
}

std::shared_ptr<Graph> SimpleExecutorPlan(const std::shared_ptr<Graph>& plan) {
  GraphRun run(plan->copy());
  runSteps(simplePlanSteps(), run);
  return run.graph;
}

void ExportGraph(const std::shared_ptr<Graph>& graph) {
  GraphRun run(graph);
  runSteps(exportSteps(), run);
}

void ProfilingExecutorPlan(const std::shared_ptr<Graph>& plan) {
  GraphRun run(plan);
  runSteps(profilingPlanSteps(), run);
}

std::vector<std::string> FreezeModule(
    const Module& frozen,
    bool simple_executor) {
  ModuleRun run{frozen, simple_executor};
  runSteps(freezeSteps(), run);
  return std::move(run.changed);
}

std::vector<std::string> OptimizeForInference(
    const Module& frozen,
    bool simple_executor,
    const std::vector<std::string>& other_methods) {
  ModuleRun run{frozen, simple_executor, other_methods};
  runSteps(optimizeForInferenceSteps(), run);
  return std::move(run.changed);
}

void FreezeStandalone(const Module& frozen, bool simple_executor) {
  ModuleRun run{frozen, simple_executor};
  runSteps(standaloneSteps(), run);
}

std::vector<PipelineStep> PipelineSteps() {
  std::vector<PipelineStep> all;
  for (const auto& [pipeline, steps] : graphPipelines()) {
    for (const GraphStep& step : *steps) {
      all.push_back({pipeline, step.name, step.header, true, false});
    }
  }
  for (const auto& [pipeline, steps] : modulePipelines()) {
    for (const ModuleStep& step : *steps) {
      all.push_back(
          {pipeline, step.name, step.header, step.on_graph != nullptr, true});
    }
  }
  return all;
}

namespace {

// The graph pass `name` of any pipeline, as a step of its own.
std::function<bool(GraphRun&)> graphStep(const std::string& name) {
  for (const auto& entry : graphPipelines()) {
    for (const GraphStep& step : *entry.second) {
      if (name == step.name) {
        return step.run;
      }
    }
  }
  for (const auto& entry : modulePipelines()) {
    for (const ModuleStep& step : *entry.second) {
      if (name == step.name && step.on_graph != nullptr) {
        return [pass = step.on_graph](GraphRun& run) { return pass(run.graph); };
      }
    }
  }
  TORCH_CHECK_VALUE(false, "jitamp: no graph pass named '", name, "'");
}

const ModuleStep& moduleStep(const std::string& name) {
  for (const auto& entry : modulePipelines()) {
    for (const ModuleStep& step : *entry.second) {
      if (name == step.name) {
        return step;
      }
    }
  }
  TORCH_CHECK_VALUE(false, "jitamp: no module pass named '", name, "'");
}

} // namespace

bool RunGraphPasses(
    const std::vector<std::string>& names,
    const std::shared_ptr<Graph>& graph) {
  std::vector<std::function<bool(GraphRun&)>> steps;
  for (const std::string& name : names) {
    steps.push_back(graphStep(name)); // every name checked before any runs
  }
  GraphRun run(graph);
  bool changed = false;
  for (const auto& step : steps) {
    changed |= step(run);
  }
  return changed;
}

std::shared_ptr<Graph> RunGraphPipeline(
    const std::string& name,
    const std::shared_ptr<Graph>& graph) {
  if (name == "rewrite") {
    RewriteAutocast(graph);
  } else if (name == "configure") {
    ConfigureRewrittenGraph(graph);
  } else if (name == "preoptimize") {
    return PreoptimizedCopy(graph);
  } else if (name == "simple_executor_plan") {
    return SimpleExecutorPlan(graph);
  } else if (name == "profiling_executor_plan") {
    ProfilingExecutorPlan(graph);
  } else if (name == "export") {
    ExportGraph(graph);
  } else if (name == "registered") {
    GraphRun run(graph);
    runSteps(registeredPreFusionSteps(), run);
    runSteps(registeredPostFusionSteps(), run);
  } else {
    TORCH_CHECK_VALUE(
        false,
        "jitamp: no graph pipeline named '",
        name,
        "' (the freeze pipelines run on a model)");
  }
  return graph;
}

void RunModulePasses(
    const std::vector<std::string>& names,
    const Module& module,
    bool simple_executor) {
  std::vector<const ModuleStep*> steps;
  for (const std::string& name : names) {
    steps.push_back(&moduleStep(name));
  }
  ModuleRun run{module, simple_executor};
  for (const ModuleStep* step : steps) {
    step->run(run);
  }
}

} // namespace jitamp
