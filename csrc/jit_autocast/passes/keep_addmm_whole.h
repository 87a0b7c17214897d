// Pass (profiling executor plan): each aten::addmm that TorchScript's
// DecomposeOps would split into mm + add (rounding twice) reads its beta
// through jitamp::autocast_dependent.scalar, which no pass folds.
#pragma once

#include <memory>

namespace torch::jit {
struct Graph;
struct Module;
} // namespace torch::jit

namespace jitamp {

class CallerRegion;

// The barriers read `region`'s token. Returns whether it changed the graph.
bool KeepAddmmWhole(
    const std::shared_ptr<torch::jit::Graph>& graph,
    CallerRegion& region);

// For a model that runs on TorchScript's stock executors (a standalone
// frozen model, strip_static_scopes.h): each aten::addmm whose beta and
// alpha are the constant 1 in a method of `module` (not its submodules')
// reads beta from an attribute of the module holding that constant,
// `_unsplit_addmm_beta_<type>` (ir/attribute_reads.h: no pass folds it), so
// that DecomposeOps leaves it whole (decomposableAddmm, fold_barriers.h).
// Returns whether it changed a graph (which then needs PreoptimizeModule).
// Why: docs/passes.md, 'KeepAddmmWhole'.
bool KeepAddmmWholeInModule(const torch::jit::Module& module);

} // namespace jitamp
