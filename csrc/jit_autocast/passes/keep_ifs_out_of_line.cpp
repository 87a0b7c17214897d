#include "passes/keep_ifs_out_of_line.h"

#include "ir/block_walk.h"
#include "ir/out_of_line.h"

#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/jit_log.h>

namespace jitamp {

using namespace torch::jit;

namespace {

// KeepIfsOutOfLine's op: does nothing; CONSERVATIVE, so no pass removes it.
const c10::Symbol kKeepOutOfLine =
    c10::Symbol::fromQualString("jitamp::keep_out_of_line");

} // namespace

bool KeepIfsOutOfLine(const std::shared_ptr<Graph>& graph) {
  bool changed = false;
  forEachNode(graph->block(), [&](Node* node) {
    if (node->kind() == c10::prim::If && needsKeepingOutOfLine(node) &&
        node->next()->kind() != kKeepOutOfLine) {
      graph->create(kKeepOutOfLine, {}, 0)->insertAfter(node);
      changed = true;
    }
  });
  if (changed) {
    GRAPH_DUMP("After keeping ifs out of line:", graph);
  }
  return changed;
}

} // namespace jitamp
