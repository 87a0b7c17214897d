// Pass: the scope ops of jitamp's plans (which run) in place of the ops as
// saved (which raise outside jitamp's plans), and back (docs/passes.md).
#pragma once

#include <memory>

namespace torch::jit {
struct Graph;
} // namespace torch::jit

namespace jitamp {

// In `plan`, blocks and task subgraphs included: jitamp::autocast_enter
// (.args) and autocast_caller_region become their _in_plan kinds; an enter
// of an autocast object made for it alone becomes the .args kind on the
// object's values, and the object goes (EnterWithArguments,
// explicit_scopes_for_export.h: its creation and attribute writes cost
// more than the enter). The last step of both executor plans. Returns
// whether it changed the graph.
bool UseScopeOpsOfPlans(const std::shared_ptr<torch::jit::Graph>& plan);

// The simple executor's plan, last: no pass runs after it, so the caller's
// region token has done its work (keeping the casts of different regions
// apart through the passes), and each jitamp::autocast_caller_region_in_plan
// becomes the 0 it returns, or goes where nothing reads it (the casts that
// read it went into direct calls): an op dispatch fewer per call of a
// function with code outside its scopes. Not in task
// subgraphs (a task's own executor compiles them). Returns whether it
// changed the graph.
bool CallerRegionsAsConstants(const std::shared_ptr<torch::jit::Graph>& plan);

// The reverse, early in the rewrite (after RepairValueScopes): a graph that
// inlined a plan's ops (torch.jit.freeze inlines the profiling executor's
// plans) holds only the ops as saved, so a saved graph never holds the
// plans' kinds. Recurses into blocks and task subgraphs. Returns whether it
// changed the graph.
bool UseScopeOpsAsSaved(const std::shared_ptr<torch::jit::Graph>& graph);

} // namespace jitamp
