// Every sequence of passes jitamp runs, written once (pipeline.cpp), and
// the one list of them (PipelineSteps) that the Python package
// (jitamp.passes), `jitamp passes` and docs/passes.md show.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace torch::jit {
struct Graph;
struct Module;
} // namespace torch::jit

namespace jitamp {

// "rewrite": the graph as rewritten and saved. In place, then on the
// subgraphs of its forks; callees are not followed (function_rewrite.h).
// Idempotent. Returns whether the graph changed.
bool RewriteAutocast(const std::shared_ptr<torch::jit::Graph>& graph);

// "configure": how a rewritten function runs (not saved; run on every
// function jitamp configures, so not reported as a rewrite).
bool ConfigureRewrittenGraph(const std::shared_ptr<torch::jit::Graph>& graph);

// "preoptimize": the graph TorchScript's executors compile and callers
// inline (GraphFunction's optimized graph), jitamp's own copy of
// TorchScript's preoptimizeGraph. Returns the copy.
std::shared_ptr<torch::jit::Graph> PreoptimizedCopy(
    const std::shared_ptr<torch::jit::Graph>& graph);

// "simple_executor_plan": the graph jitamp's simple executor runs, made
// from a PreoptimizedCopy. Returns a new graph.
std::shared_ptr<torch::jit::Graph> SimpleExecutorPlan(
    const std::shared_ptr<torch::jit::Graph>& plan);

// "profiling_executor_plan": edits a PreoptimizedCopy in place for the
// profiling executor (which callers then inline).
void ProfilingExecutorPlan(const std::shared_ptr<torch::jit::Graph>& plan);

// "export": edits `graph`, the forward of a rewritten copy of the model,
// in place for jitamp.export: inlined, then explicit_scopes_for_export.h.
void ExportGraph(const std::shared_ptr<torch::jit::Graph>& graph);

// "freeze": `frozen`, the copy torch.jit.freeze made of a module jitamp
// rewrote (every method of it and its submodules), rewritten and
// configured as the original (`simple_executor`: RewriteOptions), then its
// casts of frozen weights folded. Throws if a graph it would change has
// already run. Returns the qualified names of the methods whose casts it
// folded.
std::vector<std::string> FreezeModule(
    const torch::jit::Module& frozen,
    bool simple_executor);

// "optimize_for_inference": the same for torch.jit.optimize_for_inference,
// whose own passes (torch::jit::optimize_for_inference on forward and
// `other_methods`) run between the rewrite and the fold.
std::vector<std::string> OptimizeForInference(
    const torch::jit::Module& frozen,
    bool simple_executor,
    const std::vector<std::string>& other_methods);

// "standalone_freeze": `frozen`, a module torch.jit.freeze made, becomes a
// model without any jitamp op (runs on stock TorchScript, exact for callers
// whose autocast is off). Throws ValueError, naming each obstacle, where a
// scope cannot do without jitamp's ops (strip_static_scopes.h).
void FreezeStandalone(const torch::jit::Module& frozen, bool simple_executor);

// One step of one of the sequences above, or of "registered" (the passes
// TorchScript's profiling executor runs through RegisterPass).
struct PipelineStep {
  std::string pipeline;
  std::string pass;
  std::string header; // where the pass is, under csrc/jit_autocast/
  bool on_graph; // RunGraphPass takes it (a module step may run a graph
                 // pass on each method)
  bool on_model; // the pipeline runs on a frozen model (RunModulePasses)
};

// Every step, pipelines in the order above, steps in the order they run.
std::vector<PipelineStep> PipelineSteps();

// Runs the graph passes `names` of the list, in order, on `graph` as one
// run (`jitamp opt --passes`, IR tests). Returns whether they changed it.
// Throws ValueError for a name that is not a graph pass of the list.
bool RunGraphPasses(
    const std::vector<std::string>& names,
    const std::shared_ptr<torch::jit::Graph>& graph);

// Runs the graph pipeline `name` on `graph` as jitamp runs it (`jitamp opt
// --pipeline`): in place, or on a copy for "preoptimize" and the plans.
// Returns the graph it made. Throws ValueError for another name.
std::shared_ptr<torch::jit::Graph> RunGraphPipeline(
    const std::string& name,
    const std::shared_ptr<torch::jit::Graph>& graph);

// Runs the steps `names` of the module pipelines (those on_model) in
// order on `module`, a module torch.jit.freeze made (`jitamp opt --passes`
// on a model). Throws ValueError for a name that is not a step of them.
void RunModulePasses(
    const std::vector<std::string>& names,
    const torch::jit::Module& module,
    bool simple_executor);

} // namespace jitamp
