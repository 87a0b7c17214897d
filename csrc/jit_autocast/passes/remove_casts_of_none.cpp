#include "passes/remove_casts_of_none.h"

#include "ir/block_walk.h"
#include "ir/jitamp_ir.h"

#include <torch/csrc/jit/ir/ir.h>

namespace jitamp {

using namespace torch::jit;

// Removes the smart casts of None: a `Tensor?` argument that a caller,
// once inlined, passes None to (F.layer_norm's weight and bias). A cast of
// None is None in every state; left in, its result is an optional that no
// pass sees to be None, and CSE makes the casts of weight and bias one
// value, which symbolic autodiff mishandles as two inputs of one op
// (layer_norm's input gradient 0.88 off eager's; fuzz seed 1133, index
// 3692).
bool RemoveCastsOfNone(const std::shared_ptr<Graph>& graph) {
  bool changed = false;
  forEachNode(graph->block(), [&](Node* node) {
    if (isSmartCast(node) && node->outputs().size() == 1 &&
        node->output()->type()->kind() == TypeKind::OptionalType &&
        node->input(0)->mustBeNone()) {
      removeCast(node);
      changed = true;
    }
  });
  return changed;
}

} // namespace jitamp
