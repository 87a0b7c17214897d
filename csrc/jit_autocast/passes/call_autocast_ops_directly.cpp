#include "passes/call_autocast_ops_directly.h"

#include "ir/block_walk.h"
#include "ir/jitamp_ir.h"
#include "ir/policy_table.h"
#include "ops/direct_call.h"

#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/profiling_graph_executor_impl.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <vector>

namespace jitamp {

using namespace torch::jit;

namespace {

std::atomic<bool>& directCallsFlag() {
  static std::atomic<bool> enabled{true};
  return enabled;
}

// A smart cast of a Tensor whose one use is `call`, with constant devices.
bool foldable(Node* cast, Node* call) {
  if (cast->kind() != ops::kToFp16 && cast->kind() != ops::kToFp32) {
    return false;
  }
  const FunctionSchema* schema = cast->maybeSchema();
  if (schema == nullptr || !schema->overload_name().empty()) {
    return false; // .optional, .list
  }
  const auto& uses = cast->output()->uses();
  return uses.size() == 1 && uses[0].user == call &&
      toIValue(cast->input(1)).has_value();
}

// Moves the smart casts right before `call` that only feed it into it: the
// call makes them first, in their order, with the same function (each
// cast's region token, which only keeps CSE and constant propagation
// within a region, has done its work: this is the plan's last pass). An op
// dispatch per cast is what it saves.
void foldCastsInto(Node* call) {
  std::vector<Node*> casts;
  for (Node* cast = call->prev(); foldable(cast, call); cast = cast->prev()) {
    casts.push_back(cast);
  }
  if (casts.empty()) {
    return;
  }
  std::reverse(casts.begin(), casts.end());
  std::vector<int64_t> positions;
  std::vector<int64_t> to_fp32;
  std::vector<std::string> devices;
  for (Node* cast : casts) {
    const Use use = cast->output()->uses()[0];
    positions.push_back(static_cast<int64_t>(use.offset));
    to_fp32.push_back(cast->kind() == ops::kToFp32 ? 1 : 0);
    devices.push_back(toIValue(cast->input(1))->toStringRef());
    call->replaceInput(use.offset, cast->input(0));
    cast->destroy();
  }
  call->is_(ops::kDirectCallCastArgs, std::move(positions));
  call->is_(ops::kDirectCallCastToFp32, std::move(to_fp32));
  call->ss_(ops::kDirectCallCastDevices, std::move(devices));
}

} // namespace

bool SetDirectCallsEnabled(bool enabled) {
  return directCallsFlag().exchange(enabled);
}

bool CallAutocastOpsDirectly(const std::shared_ptr<Graph>& plan) {
  if (!directCallsFlag().load()) {
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
    foldCastsInto(call);
    changed = true;
  });
  return changed;
}

} // namespace jitamp
