#include "profiling/insert_autodiff_boundaries.h"

#include "ir/block_walk.h"
#include "ir/jitamp_ir.h"
#include "ir/policy_table.h"
#include "ops/cast_ops.h"

#include <torch/csrc/jit/ir/ir.h>

#include <map>
#include <optional>
#include <unordered_set>
#include <utility>

namespace jitamp {

using namespace torch::jit;

namespace {

// Puts boundaries (jitamp::autocast_dependent, an identity symbolic
// autodiff has no formula for) where a value that may be in lower
// precision meets another tensor: see ProfilingExecutorPlan.
class AutodiffBoundaries {
 public:
  AutodiffBoundaries(Graph& graph, CallerRegion& region)
      : graph_(graph), region_(region) {}

  bool run() {
    // Which values may be in lower precision, or in float32 where they
    // would not be without autocast, to a fixed point (a loop carries what
    // its body makes).
    size_t before = 0;
    do {
      before = lower_.size() + raised_.size();
      mark(graph_.block());
    } while (lower_.size() + raised_.size() != before);
    forEachNode(graph_.block(), [this](Node* node) { guard(node); });
    return !boundaries_.empty();
  }

 private:
  // A value may be in lower precision if a jitamp cast to it, or an op the
  // policy runs in lower precision behind smart casts, made it, or any op
  // (an if, a loop) read one to make it. A float32 cast's result is not,
  // where the cast is one for every device type. A value is raised (may be
  // float32 where it would be in the input's lower precision without
  // autocast) if a float32 or promote cast made it, or an op read one to
  // make it.
  void mark(Block* block) {
    for (Node* node : block->nodes()) {
      if (node->kind() == prim::Loop) {
        Block* body = node->blocks().at(0);
        for (size_t j = 2; j < node->inputs().size(); ++j) {
          if (lower(node->input(j)) || lower(body->outputs()[j - 1])) {
            lower_.insert(body->inputs()[j - 1]);
          }
          if (raised(node->input(j)) || raised(body->outputs()[j - 1])) {
            raised_.insert(body->inputs()[j - 1]);
          }
        }
      }
      for (Block* sub : node->blocks()) {
        mark(sub);
      }
      markFrom(node, lower_, node->kind() == ops::kToFp16 || lowPrecisionOp(node),
               node->kind() == ops::kToFp32 && castsOnEveryDevice(node));
      markFrom(node, raised_, node->kind() == ops::kToFp32 || node->kind() == ops::kPromote,
               /*never=*/false);
    }
  }

  // Puts `node`'s outputs in `set` if `made` or it read a value of `set`
  // (an input, or what a block of it returns), unless `never`.
  static void markFrom(
      Node* node,
      std::unordered_set<const Value*>& set,
      bool made,
      bool never) {
    if (never) {
      return;
    }
    bool any = made;
    for (size_t i = 0; !any && i < node->inputs().size(); ++i) {
      any = set.count(node->input(i)) != 0;
    }
    for (size_t b = 0; !any && b < node->blocks().size(); ++b) {
      for (const Value* output : node->blocks()[b]->outputs()) {
        any = any || set.count(output) != 0;
      }
    }
    if (any) {
      set.insert(node->outputs().begin(), node->outputs().end());
    }
  }

  bool lower(const Value* value) const {
    return lower_.count(value) != 0;
  }

  bool raised(const Value* value) const {
    return raised_.count(value) != 0;
  }

  // Whether a float32 cast gives float32 wherever autocast is on: its
  // devices name both device types. A row of one device type leaves a
  // tensor of the other as it is (softmax's CUDA-only float32 row, on a
  // bfloat16 CPU tensor: fuzz seed 1132, index 1208).
  static bool castsOnEveryDevice(const Node* cast) {
    const std::optional<IValue> devices = toIValue(cast->input(1));
    return devices.has_value() && devices->isString() &&
        namesDevice(devices->toStringRef(), c10::DeviceType::CPU) &&
        namesDevice(devices->toStringRef(), c10::DeviceType::CUDA);
  }

  // An op the policy runs in lower precision on some device type, behind a
  // smart cast.
  bool lowPrecisionOp(const Node* node) {
    const FunctionSchema* schema =
        node->kind().is_aten() ? node->maybeSchema() : nullptr;
    if (schema == nullptr) {
      return false;
    }
    const EffectivePolicy policy = policies_.of(*schema);
    if (policy.cpu != CastPolicy::LowerPrecisionFp &&
        policy.cuda != CastPolicy::LowerPrecisionFp) {
      return false;
    }
    for (const Value* input : node->inputs()) {
      if (isSmartCast(input->node())) {
        return true;
      }
    }
    return false;
  }

  // Whether `node` has a `dtype` argument that may not be None: an op that
  // converts what it reads (softmax, sum, cumsum, ... with dtype=).
  static bool convertsDtype(Node* node) {
    const auto index = node->schema().argumentIndexWithName("dtype");
    return index.has_value() && *index < node->inputs().size() &&
        !node->input(*index)->mustBeNone();
  }

  // Each aten op (what symbolic autodiff differentiates) that reads two
  // tensors or more reads those of them that may be in lower precision
  // through a boundary, unless a jitamp op made them (a boundary already).
  // Where it reads a raised value, it reads every tensor through a
  // boundary: one in lower precision for its own reasons (a float16 input)
  // may meet there the float32 that autocast made of another (quantile's
  // float32 row, under a bfloat16 region), and the formula would hand it a
  // float32 gradient (native_layer_norm_backward: "expected scalar type
  // Half but found Float"; fuzz seed 2159, index 7729). A raised value may
  // be in lower precision itself: a float32 row of one device type leaves
  // a tensor of the other as it is.
  // An op that converts a value that may be in lower precision to a dtype
  // is kept out of every subgraph: boundaries on what it reads and on what
  // its readers read of it (a subgraph of one node is not made). Its
  // symbolic formula takes the gradient in the dtype it converted to, and
  // softmax's passes self.dtype with it to _softmax_backward_data, which
  // fails on CPU ("expected scalar type Float but found Half"; plain
  // TorchScript too, with a float16 input; fuzz seed 1131, index 5305).
  // Called for each node, after the nodes of its blocks.
  void guard(Node* node) {
    if (!node->kind().is_aten() || node->maybeSchema() == nullptr) {
      return;
    }
    size_t tensors = 0;
    bool reads_lower = false;
    bool reads_raised = false;
    for (const Value* input : node->inputs()) {
      if (input->type()->kind() == TypeKind::TensorType) {
        ++tensors;
        reads_lower = reads_lower || lower(input);
        reads_raised = reads_raised || raised(input);
      }
    }
    const bool isolate = reads_lower && convertsDtype(node);
    for (size_t i = 0; i < node->inputs().size(); ++i) {
      Value* input = node->input(i);
      if (input->type()->kind() == TypeKind::TensorType &&
          !isJitampOp(input->node()) &&
          (((lower(input) || reads_raised) && (tensors >= 2 || isolate)) ||
           isolated_.count(input) != 0)) {
        node->replaceInput(i, boundaryOf(input, node));
      }
    }
    if (isolate) {
      isolated_.insert(node->outputs().begin(), node->outputs().end());
    }
  }

  // The boundary of `value` that `user` reads: one made right before an
  // earlier user in the user's block or a block around it (it runs
  // before), else a new one right before `user`. Not right after the
  // value is made: a value a loop or an if carries out of an early exit
  // is uninitialized on the paths that never read it, and the boundary's
  // kernel takes a Tensor ("Expected Tensor but got Uninitialized").
  Value* boundaryOf(Value* value, Node* user) {
    for (Block* block = user->owningBlock(); block != nullptr;
         block = block->owningNode() ? block->owningNode()->owningBlock()
                                     : nullptr) {
      auto it = boundaries_.find({value, block});
      if (it != boundaries_.end()) {
        return it->second;
      }
    }
    Node* boundary = graph_.create(ops::kDependent, {value, region_()}, 1);
    boundary->output()->setType(value->type());
    boundary->setSourceRange(value->node()->sourceRange());
    boundary->insertBefore(user);
    boundaries_.emplace(std::make_pair(value, user->owningBlock()),
                        boundary->output());
    return boundary->output();
  }

  Graph& graph_;
  std::unordered_set<const Value*> lower_;
  std::unordered_set<const Value*> raised_;
  // The results of ops kept out of every subgraph (guard).
  std::unordered_set<const Value*> isolated_;
  // By the value and the block of the user it was made for.
  std::map<std::pair<Value*, Block*>, Value*> boundaries_;
  PolicyCache policies_;
  // The caller-region token the boundaries read (one per plan, made at the
  // first boundary).
  CallerRegion& region_;
};

} // namespace

bool InsertAutodiffBoundaries(
    const std::shared_ptr<Graph>& graph,
    CallerRegion& region) {
  return AutodiffBoundaries(*graph, region).run();
}

} // namespace jitamp
