// What tells whether TorchScript has run a function, and whether jitamp
// configured it: GraphFunction's private executors and optimized graphs,
// read and written here alone.
#pragma once

#include <memory>
#include <vector>

namespace torch::jit {
struct Function;
struct GraphExecutor;
struct GraphFunction;
struct Graph;
} // namespace torch::jit

namespace jitamp {

// Whether TorchScript has built an executor or an inlinable optimized graph
// for the function, i.e. it has run (or a caller that inlined it has). The
// optimized graph and the executor jitamp installs do not count: jitamp made
// them from the graph as it is, and makes them again when it changes it.
bool HasRun(torch::jit::Function& function);

// jitamp fills every optimized-graph slot (one per autocast specialization)
// with one graph, and every executor slot with one executor: that is how
// they are told apart from TorchScript's, which fills one slot at a time.
bool holdsJitampsOptimizedGraph(torch::jit::GraphFunction& function);
bool holdsJitampsExecutor(torch::jit::GraphFunction& function);

// The graph in the first optimized-graph slot (null if none).
std::shared_ptr<torch::jit::Graph> optimizedGraph(
    torch::jit::GraphFunction& function);
void setOptimizedGraphs(
    torch::jit::GraphFunction& function,
    const std::shared_ptr<torch::jit::Graph>& graph);
void setExecutors(
    torch::jit::GraphFunction& function,
    const torch::jit::GraphExecutor& executor);

// The graphs TorchScript makes the function's later executors and plans
// from: its optimized graphs (one per autocast specialization it was
// compiled or inlined under), the graph each executor it made starts from,
// and, where one began profiling, the graph it profiles (its optimized plan
// is a copy). A change to them reaches every plan not built yet.
std::vector<std::shared_ptr<torch::jit::Graph>> startingGraphs(
    torch::jit::GraphFunction& function);

} // namespace jitamp
