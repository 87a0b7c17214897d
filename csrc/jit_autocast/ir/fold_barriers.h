// Keeping ops whose result the autocast state decides from being computed
// ahead of time. Header-only; shared by insert_smart_casts.cpp (which puts
// the barriers in), fold_static_casts.cpp (which settles them in frozen
// graphs), pipeline.cpp (the executor plans) and strip_static_scopes.cpp
// (which take them out).
//
// A fold barrier, `jitamp::autocast_dependent(x, region)`, is an identity
// on one tensor input of such an op whose region token is never a
// constant, so constant propagation (torch.jit.freeze, the profiling
// executor's first optimization) never folds the op. (A model that holds
// no jitamp op reads a module attribute instead: attribute_reads.h.) Why
// and where: docs/frozen.md, 'Fold barriers: ops the state decides, kept
// from constant folding'.
#pragma once

#include "ir/block_walk.h"
#include "ir/jitamp_ir.h"

#include <torch/csrc/jit/ir/ir.h>

#include <algorithm>
#include <optional>
#include <vector>

namespace jitamp {

inline bool isFoldBarrier(const torch::jit::Node* node) {
  return node->kind() == ops::kDependent;
}

// `value`, or what the barrier that made it guards.
inline torch::jit::Value* throughBarrier(torch::jit::Value* value) {
  return isFoldBarrier(value->node()) ? value->node()->input(0) : value;
}

// Which values of a graph may become constants by constant propagation,
// followed along a walk in program order (enter() before a node's blocks,
// record() after the node). Not: the results of jitamp ops (a barrier's
// included), of ops constant propagation never runs (side effects other
// than a call's, in-place), of forked tasks, and what is computed from
// those. (Nondeterministic ops count as may: asking costs a SchemaInfo per
// node, and a barrier too many only costs an op.) Graph inputs and attributes may: a caller may inline
// the graph with constants, freezing makes attributes constants (a frozen
// module, too, may be called by a module that is frozen later).
class MaybeConstants {
 public:
  bool maybe(const torch::jit::Value* value) const {
    const size_t id = value->unique();
    return id >= runtime_.size() || !runtime_[id];
  }

  // Before `node`'s blocks are walked: a loop body's inputs.
  void enter(torch::jit::Node* node) {
    if (node->kind() == c10::prim::Loop) {
      torch::jit::Block* body = node->blocks().at(0);
      // the iteration count, then the carried values (loop inputs 2...)
      setIf(body->inputs().at(0), maybe(node->input(0)));
      for (size_t j = 1; j < body->inputs().size(); ++j) {
        setIf(body->inputs()[j], maybe(node->input(j + 1)));
      }
      return;
    }
    for (torch::jit::Block* block : node->blocks()) {
      for (torch::jit::Value* input : block->inputs()) {
        setIf(input, false);
      }
    }
  }

  // After `node` (and its blocks).
  void record(torch::jit::Node* node) {
    const auto kind = node->kind();
    if (kind == c10::prim::Constant) {
      return;
    }
    if (kind == c10::prim::If) {
      const bool condition = maybe(node->input(0));
      for (size_t j = 0; j < node->outputs().size(); ++j) {
        bool any = false;
        for (torch::jit::Block* block : node->blocks()) {
          any = any || maybe(block->outputs()[j]);
        }
        setIf(node->output(j), condition && any);
      }
      return;
    }
    if (kind == c10::prim::Loop) {
      torch::jit::Block* body = node->blocks().at(0);
      const bool counted = maybe(node->input(0)) && maybe(node->input(1));
      for (size_t j = 0; j < node->outputs().size(); ++j) {
        setIf(
            node->output(j),
            counted && maybe(node->input(j + 2)) &&
                maybe(body->outputs()[j + 1]));
      }
      return;
    }
    // The inputs first: most results computed from a cast's are settled
    // there, before the questions that cost more.
    bool may = node->blocks().empty();
    for (size_t i = 0; may && i < node->inputs().size(); ++i) {
      may = maybe(node->input(i));
    }
    // A call's result is its callee's, which freezing inlines.
    const bool call = kind == c10::prim::CallFunction || kind == c10::prim::CallMethod;
    may = may && !hasTaskSubgraph(node) && !isJitampOp(node) &&
        (call || !node->hasSideEffects());
    if (may) {
      const torch::jit::FunctionSchema* schema = node->maybeSchema();
      may = !(schema && schema->is_mutable());
    }
    for (torch::jit::Value* output : node->outputs()) {
      setIf(output, may);
    }
  }

 private:
  void setIf(const torch::jit::Value* value, bool may) {
    const size_t id = value->unique();
    if (id >= runtime_.size()) {
      if (may) {
        return;
      }
      runtime_.resize(std::max<size_t>(id + 1, 2 * runtime_.size()), false);
    }
    runtime_[id] = !may;
  }

  // By Value::unique() (dense within a graph): cheaper than a hash set,
  // at one look per input of every node of the pass.
  std::vector<bool> runtime_;
};

// The input of `node` a barrier goes on: the first Tensor, else the first
// Optional[Tensor], else the first Tensor[] (each has an overload).
inline std::optional<size_t> barrierInput(const torch::jit::Node* node) {
  std::optional<size_t> optional, list;
  for (size_t i = 0; i < node->inputs().size(); ++i) {
    const c10::TypePtr& type = node->input(i)->type();
    if (type->kind() == c10::TypeKind::TensorType) {
      return i;
    }
    if (const auto opt = type->cast<c10::OptionalType>()) {
      if (!optional &&
          opt->getElementType()->kind() == c10::TypeKind::TensorType) {
        optional = i;
      }
    } else if (const auto l = type->cast<c10::ListType>()) {
      if (!list && l->getElementType()->kind() == c10::TypeKind::TensorType) {
        list = i;
      }
    }
  }
  return optional ? optional : list;
}

// Puts a barrier on input `index` of `node`, tied to `region`.
inline torch::jit::Node* insertFoldBarrier(
    torch::jit::Node* node,
    size_t index,
    torch::jit::Value* region) {
  torch::jit::Graph* graph = node->owningGraph();
  torch::jit::Value* input = node->input(index);
  torch::jit::Node* barrier =
      graph->create(ops::kDependent, {input, region}, 1);
  barrier->output()->setType(input->type());
  barrier->setSourceRange(node->sourceRange());
  barrier->insertBefore(node);
  node->replaceInput(index, barrier->output());
  return barrier;
}

// Whether some input of `node` is a barrier's.
inline bool hasFoldBarrier(const torch::jit::Node* node) {
  for (const torch::jit::Value* input : node->inputs()) {
    if (isFoldBarrier(input->node())) {
      return true;
    }
  }
  return false;
}

// Takes `node`'s barriers off it (a barrier nothing else reads goes).
inline void removeFoldBarriers(torch::jit::Node* node) {
  for (size_t i = 0; i < node->inputs().size(); ++i) {
    torch::jit::Node* barrier = node->input(i)->node();
    if (!isFoldBarrier(barrier)) {
      continue;
    }
    node->replaceInput(i, barrier->input(0));
    if (!barrier->output()->hasUses()) {
      barrier->destroy();
    }
  }
}

// Whether TorchScript's DecomposeOps may split `node` into `mm` + `add`
// (rounding twice where eager's addmm rounds once): an aten::addmm neither
// of whose beta and alpha is a constant other than 1 (it splits where both
// are the constant 1; an argument may become it where a caller inlines the
// graph). Reading either from a value that no pass folds keeps the op whole
// (ProfilingExecutorPlan, KeepAddmmWholeInModule). Why: docs/passes.md,
// 'KeepAddmmWhole'.
inline bool decomposableAddmm(const torch::jit::Node* node) {
  if (node->kind() != c10::aten::addmm ||
      !node->matches(
          "aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta, "
          "Scalar alpha) -> Tensor")) {
    return false;
  }
  for (const c10::Symbol name : {c10::attr::beta, c10::attr::alpha}) {
    const std::optional<c10::IValue> constant =
        torch::jit::toIValue(node->namedInput(name));
    if (constant.has_value() && constant->isScalar() &&
        constant->toScalar().toComplexDouble() != 1.0) {
      return false;
    }
  }
  return true;
}

// Removes every barrier of `block` and its nested blocks (not of forked
// tasks' subgraphs).
inline bool removeAllFoldBarriers(torch::jit::Block* block) {
  bool changed = false;
  forEachNode(block, [&](torch::jit::Node* node) {
    if (isFoldBarrier(node)) {
      removeCast(node);
      changed = true;
    }
  });
  return changed;
}

} // namespace jitamp
