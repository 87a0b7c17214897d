#include "passes/pool_channels_last.h"

#include "ir/block_walk.h"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/ir.h>

#include <vector>

namespace jitamp {

using namespace torch::jit;

bool PoolChannelsLast(const std::shared_ptr<Graph>& graph) {
  static const char* const kAtenSchema =
      "aten::max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], "
      "int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> Tensor";
  bool changed = false;
  forEachNode(
      graph->block(),
      [&](Node* node) {
        if (!node->matches(kAtenSchema)) {
          return;
        }
        WithInsertPoint here(node);
        Node* pool = graph->insertNode(graph->create(ops::kMaxPool2d, node->inputs()));
        pool->output()->setType(node->output()->type());
        pool->copyMetadata(node);
        node->output()->replaceAllUsesWith(pool->output());
        node->destroy();
        changed = true;
      },
      Subgraphs::Visit);
  return changed;
}

bool PoolChannelsLastInModule(const Module& module) {
  std::vector<std::shared_ptr<Graph>> graphs;
  bool needs_jitamp = false;
  for (const Method& method : module.get_methods()) {
    graphs.push_back(toGraphFunction(method.function()).graph());
    needs_jitamp = needs_jitamp ||
        anyNode(graphs.back()->block(), isJitampOp, Subgraphs::Visit);
  }
  bool changed = false;
  for (const auto& graph : graphs) {
    changed = (needs_jitamp && PoolChannelsLast(graph)) || changed;
  }
  return changed;
}

} // namespace jitamp
