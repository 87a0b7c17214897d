#include "repairs/keep_ifs_out_of_line.h"

#include "ir/block_walk.h"
#include "repairs/out_of_line.h"

#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/jit_log.h>

namespace jitamp {

using namespace torch::jit;

bool KeepIfsOutOfLine(const std::shared_ptr<Graph>& graph) {
  bool changed = false;
  forEachNode(graph->block(), [&](Node* node) {
    if (node->kind() == c10::prim::If && needsKeepingOutOfLine(node)) {
      changed |= putKeepOutOfLineAfter(node);
    }
  });
  if (changed) {
    GRAPH_DUMP("After keeping ifs out of line:", graph);
  }
  return changed;
}

} // namespace jitamp
