#include "ir/graph_function_state.h"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/runtime/graph_executor_impl.h>
#include <torch/csrc/jit/runtime/profiling_graph_executor_impl.h>
#include <torch/csrc/jit/runtime/profiling_record.h>
#include <torch/version.h>

#include <algorithm>
#include <memory>
#include <tuple>
#include <type_traits>
#include <vector>

namespace jitamp {

using namespace torch::jit;

namespace {

// jitamp reads and writes two private members of torch::jit::GraphFunction
// (below: optimized_graphs_, an array of shared_ptr<Graph>, and executors_,
// an array of optional GraphExecutor), reads one of torch::jit::
// GraphExecutor (pImpl), one of GraphExecutorImplBase (graph, the graph
// an executor starts from) and one of ProfilingGraphExecutorImpl (pr_, the
// record of the graph it profiles), and calls GraphFunction's _set_ignore_amp /
// _set_initial_executor_execution_mode.
// All exist, with these meanings, in every torch this file is checked on.
static_assert(
    TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4 &&
        TORCH_VERSION_MINOR <= 15,
    "jitamp supports torch 2.4 to 2.15 (it reads GraphFunction internals in "
    "graph_function_state.cpp); this is torch " TORCH_VERSION
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

// The tag of one member: get(Tag()) is its pointer.
#define JITAMP_PRIVATE_MEMBER(Tag, member) \
  struct Tag {                              \
    friend constexpr auto get(Tag);         \
  };                                        \
  template struct PrivateMember<Tag, member>
JITAMP_PRIVATE_MEMBER(ExecutorsTag, &GraphFunction::executors_);
JITAMP_PRIVATE_MEMBER(OptimizedGraphsTag, &GraphFunction::optimized_graphs_);
JITAMP_PRIVATE_MEMBER(ExecutorImplTag, &GraphExecutor::pImpl);
JITAMP_PRIVATE_MEMBER(ExecutorGraphTag, &GraphExecutorImplBase::graph);
JITAMP_PRIVATE_MEMBER(ProfilingRecordTag, &ProfilingGraphExecutorImpl::pr_);
#undef JITAMP_PRIVATE_MEMBER

} // namespace

// TorchScript fills one slot of optimized_graphs_ (one per autocast
// specialization) at a time, when the function first runs, or a caller
// inlines it, under that specialization. jitamp fills every slot with one
// graph (installOptimizedGraph): that is how its graph is told apart.
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

std::shared_ptr<Graph> optimizedGraph(GraphFunction& function) {
  return (function.*get(OptimizedGraphsTag())).front();
}

void setOptimizedGraphs(
    GraphFunction& function,
    const std::shared_ptr<Graph>& graph) {
  for (auto& slot : function.*get(OptimizedGraphsTag())) {
    slot = graph;
  }
}

void setExecutors(GraphFunction& function, const GraphExecutor& executor) {
  for (auto& slot : function.*get(ExecutorsTag())) {
    slot = executor;
  }
}

std::vector<std::shared_ptr<Graph>> startingGraphs(GraphFunction& function) {
  std::vector<std::shared_ptr<Graph>> graphs;
  const auto add = [&](const std::shared_ptr<Graph>& graph) {
    if (graph && std::find(graphs.begin(), graphs.end(), graph) == graphs.end()) {
      graphs.push_back(graph);
    }
  };
  for (const std::shared_ptr<Graph>& slot : function.*get(OptimizedGraphsTag())) {
    add(slot);
  }
  for (const auto& slot : function.*get(ExecutorsTag())) {
    if (slot.has_value()) {
      if (const auto& impl = (*slot).*get(ExecutorImplTag())) {
        add((*impl).*get(ExecutorGraphTag()));
        // an executor that began profiling makes its plan from the graph
        // it profiles
        if (auto* profiling =
                dynamic_cast<ProfilingGraphExecutorImpl*>(impl.get())) {
          if (const auto& record = (*profiling).*get(ProfilingRecordTag())) {
            add(record->graph());
          }
        }
      }
    }
  }
  return graphs;
}

} // namespace jitamp
