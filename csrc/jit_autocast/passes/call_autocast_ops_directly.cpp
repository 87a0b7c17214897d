#include "passes/call_autocast_ops_directly.h"

#include "ir/block_walk.h"
#include "ir/jitamp_ir.h"
#include "ir/policy_table.h"
#include "ops/direct_call.h"

#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/profiling_graph_executor_impl.h>

#include <atomic>
#include <memory>

namespace jitamp {

using namespace torch::jit;

namespace {

std::atomic<bool>& enabledFlag() {
  static std::atomic<bool> enabled{true};
  return enabled;
}

} // namespace

bool SetDirectCallsEnabled(bool enabled) {
  return enabledFlag().exchange(enabled);
}

bool CallAutocastOpsDirectly(const std::shared_ptr<Graph>& plan) {
  if (!enabledFlag().load()) {
    return false;
  }
  std::shared_ptr<Graph> graph = plan;
  runNooptPassPipeline(graph);
  bool changed = false;
  forEachNode(plan->block(), [&](Node* node) {
    if (!node->kind().is_aten()) {
      return;
    }
    const FunctionSchema* schema = node->maybeSchema();
    if (schema == nullptr || !canCallDirectly(*schema)) {
      return;
    }
    Node* call = plan->create(ops::kDirectCall, node->inputs(), 0);
    call->s_(ops::kDirectCallOp, qualified(schema->name(), schema->overload_name()));
    for (Value* output : node->outputs()) {
      call->addOutput()->setType(output->type())->copyMetadata(output);
    }
    call->copyMetadata(node);
    call->insertBefore(node);
    node->replaceAllUsesWith(call);
    node->destroy();
    changed = true;
  });
  return changed;
}

} // namespace jitamp
