#include "passes/wrap_in_autocast_scope.h"

#include "ir/jitamp_ir.h"

#include <ATen/autocast_mode.h>
#include <c10/core/Device.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/jit_log.h>

namespace jitamp {

using namespace torch::jit;

void WrapInAutocastScope(
    const std::shared_ptr<Graph>& graph,
    const std::string& device_type,
    c10::ScalarType dtype) {
  TORCH_CHECK(
      at::autocast::is_autocast_available(c10::Device(device_type).type()),
      "jitamp: an autocast scope's device type is one with autocast "
      "(cpu, cuda, xpu, ...), not '",
      device_type,
      "'");
  TORCH_CHECK(
      dtype == c10::kBFloat16 || dtype == c10::kHalf,
      "jitamp: an autocast scope's dtype is bfloat16 or float16, not ",
      c10::toString(dtype));
  Block* body = graph->block();
  Node* enter = graph->create(ops::kEnter, 2);
  body->prependNode(enter);
  {
    WithInsertPoint guard(enter);
    enter->addInput(graph->insertConstant(device_type));
    enter->addInput(graph->insertConstant(static_cast<int64_t>(dtype)));
    enter->addInput(graph->insertConstant(true));
    enter->addInput(graph->insertConstant(c10::IValue()));
  }
  enter->output(0)->setType(jitampClass("AutocastGuard"))->setDebugName(
      loadHint("autocast_scope"));
  enter->output(1)->setType(c10::IntType::get());
  graph->create(ops::kExit, {enter->output(0)}, 0)
      ->insertBefore(body->return_node());
  GRAPH_UPDATE("Wrapped the graph in ", *enter);
}

} // namespace jitamp
