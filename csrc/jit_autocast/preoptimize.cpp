#include "preoptimize.h"

#include "cast_ops.h"
#include "fallback_calls.h"
#include "fold_barriers.h"
#include "jitamp_ir.h"
#include "keep_loops_out_of_line.h"
#include "policy_table.h"

#include <torch/csrc/jit/ir/alias_analysis.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/constant_pooling.h>
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/passes/peephole.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace jitamp {

using namespace torch::jit;

namespace {

// Marks the aten::alias nodes this pass puts between two transposes, so that
// it removes those and only those (the graph may have aten::alias of its own).
const Symbol kKeptView = Symbol::attr("jitamp_kept_view");

// aten::t has one overload, the one the peephole pass folds.
bool isTranspose(const Node* node) {
  return node->kind() == aten::t;
}

// Puts an aten::alias between every aten::t and the aten::t that reads it,
// anywhere in the graph (the peephole pass folds across blocks): one per
// inner transpose, right after it, read by its outer transposes only.
void guardTransposePairs(Block* block) {
  for (Node* node : block->nodes()) {
    for (Block* sub : node->blocks()) {
      guardTransposePairs(sub);
    }
    if (!isTranspose(node)) {
      continue;
    }
    Node* guard = nullptr;
    const std::vector<Use> uses = node->output()->uses(); // edited below
    for (const Use& use : uses) {
      if (!isTranspose(use.user)) {
        continue;
      }
      if (guard == nullptr) {
        guard = node->owningGraph()->create(aten::alias, {node->output()});
        guard->output()->setType(node->output()->type());
        guard->i_(kKeptView, 1);
        guard->insertAfter(node);
      }
      use.user->replaceInput(use.offset, guard->output());
    }
  }
}

void removeGuards(Block* block) {
  for (auto it = block->nodes().begin(); it != block->nodes().end();) {
    Node* node = *it++;
    for (Block* sub : node->blocks()) {
      removeGuards(sub);
    }
    if (node->kind() == aten::alias && node->hasAttribute(kKeptView)) {
      node->output()->replaceAllUsesWith(node->input());
      node->destroy();
    }
  }
}

// A value the smart cast may find to be a leaf that requires grad: a
// weight read from a module, or an argument.
bool mayBeWeight(const Value* value) {
  const Node* producer = value->node();
  return producer->kind() == prim::GetAttr ||
      (producer->kind() == prim::Param &&
       producer == value->owningGraph()->param_node());
}

// The smart casts of `block` and its nested blocks, each with whether it
// sits in a loop.
void collectCasts(
    Block* block,
    bool in_loop,
    std::vector<std::pair<Node*, bool>>& casts) {
  for (Node* node : block->nodes()) {
    for (Block* sub : node->blocks()) {
      collectCasts(sub, in_loop || node->kind() == prim::Loop, casts);
    }
    if (isSmartCast(node)) {
      casts.emplace_back(node, in_loop);
    }
  }
}

// Whether the smart cast must stay (see SimpleExecutorPlan). Every form
// but the list ones returns, in order, its first inputs.
bool keepCast(const Node* cast, bool in_loop) {
  for (const Value* output : cast->outputs()) {
    if (output->type()->kind() == c10::TypeKind::ListType) {
      return true;
    }
  }
  for (size_t i = 0; i < cast->outputs().size(); ++i) {
    if (!in_loop && mayBeWeight(cast->input(i))) {
      return true;
    }
  }
  return false;
}

// The nodes that read the cast's results (one: the op it was inserted for).
std::unordered_set<Node*> usersOf(const Node* cast) {
  std::unordered_set<Node*> users;
  for (const Value* output : cast->outputs()) {
    for (const Use& use : output->uses()) {
      users.insert(use.user);
    }
  }
  return users;
}

// Removes the smart casts that the op's own autocast kernel makes anyway
// (see SimpleExecutorPlan). An op's casts go or stay together: the kernel
// casts what is left in eager's order (the order numbers their autograd
// nodes, and so the order backward sums a value's gradients in), which a
// cast made before the op would break.
void removeKernelCasts(Block* block) {
  std::vector<std::pair<Node*, bool>> casts;
  collectCasts(block, /*in_loop=*/false, casts);
  std::vector<std::unordered_set<Node*>> users;
  std::unordered_set<const Node*> keep_for; // ops whose casts stay
  for (const auto& [cast, in_loop] : casts) {
    users.push_back(usersOf(cast));
    const auto& read_by = users.back();
    const bool one_op = read_by.size() == 1 && !isSmartCast(*read_by.begin());
    if (!one_op || keepCast(cast, in_loop)) {
      keep_for.insert(read_by.begin(), read_by.end());
    }
  }
  for (size_t c = 0; c < casts.size(); ++c) {
    Node* cast = casts[c].first;
    if (users[c].size() != 1 || keep_for.count(*users[c].begin()) != 0) {
      continue;
    }
    for (size_t i = 0; i < cast->outputs().size(); ++i) {
      cast->output(i)->replaceAllUsesWith(cast->input(i));
    }
    cast->destroy();
  }
}

// Removes the smart casts of None: a `Tensor?` argument that a caller,
// once inlined, passes None to (F.layer_norm's weight and bias). A cast of
// None is None in every state; left in, its result is an optional that no
// pass sees to be None, and CSE makes the casts of weight and bias one
// value, which symbolic autodiff mishandles as two inputs of one op
// (layer_norm's input gradient 0.88 off eager's; fuzz seed 1133, index
// 3692).
void removeCastsOfNone(Block* block) {
  for (auto it = block->nodes().begin(); it != block->nodes().end();) {
    Node* node = *it++;
    for (Block* sub : node->blocks()) {
      removeCastsOfNone(sub);
    }
    if (isSmartCast(node) && node->outputs().size() == 1 &&
        node->output()->type()->kind() == TypeKind::OptionalType &&
        node->input(0)->mustBeNone()) {
      node->output()->replaceAllUsesWith(node->input(0));
      node->destroy();
    }
  }
}

const Symbol kSetGradEnabled = Symbol::fromQualString("aten::set_grad_enabled");

// Whether `value` is defined in `loop` (its body's inputs included).
bool definedIn(const Value* value, const Node* loop) {
  for (const Node* node = value->node(); node != nullptr;
       node = node->owningBlock()->owningNode()) {
    if (node == loop) {
      return true;
    }
  }
  return false;
}

// Whether a node of `block` (nested blocks included) may change, from one
// iteration of the loop it is the body of to the next, what a cast does:
// the autocast state (scopes, calls that may open theirs), grad mode
// (`torch.no_grad()`, `torch.set_grad_enabled`), or anything jitamp's own
// ops other than casts do (tasks included: forks and waits).
bool mayChangeCastState(Block* block) {
  for (Node* node : block->nodes()) {
    const Symbol kind = node->kind();
    if (kind == prim::Enter || kind == prim::Exit ||
        kind == prim::CallFunction || kind == prim::CallMethod ||
        kind == kSetGradEnabled || hasTaskSubgraph(node)) {
      return true;
    }
    const std::string name = kind.toQualString();
    if (!isSmartCast(node) && kind != ops::kToFp16BeforeLoop &&
        (name.rfind("jitamp::", 0) == 0 ||
         name.find("autocast") != std::string::npos)) {
      return true;
    }
    for (Block* sub : node->blocks()) {
      if (mayChangeCastState(sub)) {
        return true;
      }
    }
  }
  return false;
}

// Makes a loop's low-precision casts of values defined before it once,
// before the loop (jitamp::autocast_to_fp16_before_loop, cast_ops.cpp): in
// a no-grad loop over a weight, eager's kernel looks the weight's cast up
// in its cache at every iteration. Taken: a single-tensor cast directly in
// the body of a loop whose body changes no state a cast reads, of a value
// that no op in the graph writes (AliasDb), read by ops that do not write
// it; a module attribute the body reads is read once more before the loop
// for it. Inner loops first; a cast made before an inner loop stays in the
// outer loop's body (the inner loop may not run at every outer iteration).
class LoopCastHoister {
 public:
  explicit LoopCastHoister(std::shared_ptr<Graph> graph)
      : graph_(std::move(graph)) {}

  void run() {
    hoistIn(graph_->block());
  }

 private:
  void hoistIn(Block* block) {
    for (Node* node : block->nodes()) {
      for (Block* sub : node->blocks()) {
        hoistIn(sub);
      }
      if (node->kind() == prim::Loop &&
          !mayChangeCastState(node->blocks().at(0))) {
        hoistOutOf(node);
      }
    }
  }

  void hoistOutOf(Node* loop) {
    // One cast before the loop per value, devices and region.
    std::map<std::tuple<Value*, Value*, Value*>, Value*> before;
    // The attributes the body reads, each read once more before the loop.
    std::map<std::pair<Value*, std::string>, Value*> reads;
    for (Node* cast : loop->blocks().at(0)->nodes()) {
      if (!hoistable(cast, loop)) {
        continue;
      }
      Value* source = sourceBefore(cast->input(0), loop, reads);
      Value*& made = before[{source, cast->input(1), cast->input(2)}];
      if (made == nullptr) {
        Node* once = graph_->create(
            ops::kToFp16BeforeLoop,
            {source, cast->input(1), loop->input(0), loop->input(1),
             cast->input(2)},
            1);
        once->output()->setType(cast->output()->type());
        once->setSourceRange(cast->sourceRange());
        once->insertBefore(loop);
        made = once->output();
      }
      cast->replaceInput(0, made);
    }
  }

  bool hoistable(Node* cast, Node* loop) {
    if (cast->kind() != ops::kToFp16 || cast->inputs().size() != 3 ||
        cast->input(0)->type()->kind() != c10::TypeKind::TensorType ||
        definedIn(cast->input(1), loop) || definedIn(cast->input(2), loop) ||
        (definedIn(cast->input(0), loop) &&
         !invariantAttribute(cast->input(0), loop))) {
      return false;
    }
    for (const Use& use : cast->output()->uses()) {
      const FunctionSchema* schema = use.user->maybeSchema();
      if (schema == nullptr || use.offset >= schema->arguments().size()) {
        return false;
      }
      const auto* alias = schema->arguments()[use.offset].alias_info();
      if (alias != nullptr && alias->isWrite()) {
        return false;
      }
    }
    if (!aliases_) {
      aliases_ = std::make_unique<AliasDb>(graph_);
    }
    return !aliases_->hasWriters(cast->input(0));
  }

  // A module attribute the loop reads (`self.w` in its body) from an object
  // defined before it, and that no prim::SetAttr in the graph sets: the
  // same tensor at every iteration (the body makes no calls).
  bool invariantAttribute(const Value* value, const Node* loop) {
    const Node* get = value->node();
    if (get->kind() != prim::GetAttr || definedIn(get->input(), loop)) {
      return false;
    }
    if (!set_attributes_) {
      set_attributes_.emplace();
      collectSetAttributes(graph_->block());
    }
    return set_attributes_->count(get->s(attr::name)) == 0;
  }

  void collectSetAttributes(Block* block) {
    for (Node* node : block->nodes()) {
      if (node->kind() == prim::SetAttr) {
        set_attributes_->insert(node->s(attr::name));
      }
      for (Block* sub : node->blocks()) {
        collectSetAttributes(sub);
      }
    }
  }

  // `value` as read before `loop`: itself, or a read of the same attribute
  // before the loop (one per object and name, kept in `reads`).
  Value* sourceBefore(
      Value* value,
      Node* loop,
      std::map<std::pair<Value*, std::string>, Value*>& reads) {
    if (!definedIn(value, loop)) {
      return value;
    }
    Node* get = value->node();
    Value*& read = reads[{get->input(), get->s(attr::name)}];
    if (read == nullptr) {
      Node* copy = graph_->createClone(get, [](Value* v) { return v; });
      copy->insertBefore(loop);
      read = copy->output();
    }
    return read;
  }

  std::shared_ptr<Graph> graph_;
  // Made at the first question: a cast made before a loop reads what its
  // in-loop cast read and writes nothing, so the answers outlive the edits.
  std::unique_ptr<AliasDb> aliases_;
  // The attribute names that some prim::SetAttr of the graph sets.
  std::optional<std::unordered_set<std::string>> set_attributes_;
};

// Puts boundaries (jitamp::autocast_dependent, an identity symbolic
// autodiff has no formula for) where a value that may be in lower
// precision meets another tensor: see ProfilingExecutorPlan.
class AutodiffBoundaries {
 public:
  AutodiffBoundaries(Graph& graph, std::function<Value*()> region)
      : graph_(graph), region_(std::move(region)) {}

  void run() {
    // Which values may be in lower precision, or in float32 where they
    // would not be without autocast, to a fixed point (a loop carries what
    // its body makes).
    size_t before = 0;
    do {
      before = lower_.size() + raised_.size();
      mark(graph_.block());
    } while (lower_.size() + raised_.size() != before);
    guard(graph_.block());
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
  void guard(Block* block) {
    for (Node* node : block->nodes()) {
      for (Block* sub : node->blocks()) {
        guard(sub);
      }
      if (!node->kind().is_aten() || node->maybeSchema() == nullptr) {
        continue;
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
  std::function<Value*()> region_;
};

// Keeps every aten::addmm that DecomposeOps may split whole
// (decomposableAddmm, fold_barriers.h): it reads its beta through
// `jitamp::autocast_dependent.scalar`, which no pass folds (its region
// token is never a constant).
void keepAddmmWhole(Block* block, const std::function<Value*()>& region) {
  for (Node* node : block->nodes()) {
    for (Block* sub : node->blocks()) {
      keepAddmmWhole(sub, region);
    }
    if (decomposableAddmm(node) &&
        !isFoldBarrier(node->namedInput(attr::beta)->node()) &&
        !isFoldBarrier(node->namedInput(attr::alpha)->node())) {
      insertFoldBarrier(node, *node->schema().argumentIndexWithName("beta"),
                        region());
    }
  }
}

// Replaces, in `block` and the blocks and task subgraphs within, each node
// of a kind in `renamed` with one of the kind it maps to (same inputs,
// outputs, attributes and source). Returns whether it replaced one.
bool renameScopeOps(
    Block* block,
    const std::unordered_map<Symbol, Symbol>& renamed) {
  bool changed = false;
  for (auto it = block->nodes().begin(); it != block->nodes().end();) {
    Node* node = *it;
    ++it;
    for (Block* sub : node->blocks()) {
      changed |= renameScopeOps(sub, renamed);
    }
    if (hasTaskSubgraph(node)) {
      changed |= renameScopeOps(node->g(attr::Subgraph)->block(), renamed);
    }
    const auto found = renamed.find(node->kind());
    if (found == renamed.end()) {
      continue;
    }
    const Symbol kind = found->second;
    Node* in_plan = block->owningGraph()->create(
        kind, node->inputs(), node->outputs().size());
    in_plan->copyMetadata(node)->copyAttributes(*node)->insertBefore(node);
    for (size_t i = 0; i < node->outputs().size(); ++i) {
      in_plan->output(i)->copyMetadata(node->output(i));
    }
    node->replaceAllUsesWith(in_plan);
    node->destroy();
    changed = true;
  }
  return changed;
}

} // namespace

void ProfilingExecutorPlan(const std::shared_ptr<Graph>& plan) {
  Value* region = nullptr;
  const auto caller_region = [&]() {
    if (region == nullptr) {
      region = insertCallerRegion(*plan);
    }
    return region;
  };
  AutodiffBoundaries(*plan, caller_region).run();
  keepAddmmWhole(plan->block(), caller_region);
  KeepIfsOutOfLine(plan);
  IgnoreAmpInFallbacks(plan);
  UseScopeOpsOfPlans(*plan);
}

std::shared_ptr<Graph> SimpleExecutorPlan(const std::shared_ptr<Graph>& plan) {
  std::shared_ptr<Graph> copy = plan->copy();
  removeAllFoldBarriers(copy->block());
  LoopCastHoister(copy).run();
  removeKernelCasts(copy->block());
  KeepLoopsOutOfLine(copy);
  KeepIfsOutOfLine(copy);
  UseScopeOpsOfPlans(*copy);
  return copy;
}

void UseScopeOpsOfPlans(Graph& plan) {
  renameScopeOps(plan.block(), scopeOpsInPlans());
}

bool UseScopeOpsAsSaved(Graph& graph) {
  static const std::unordered_map<Symbol, Symbol> as_saved = [] {
    std::unordered_map<Symbol, Symbol> inverse;
    for (const auto& [saved, in_plan] : scopeOpsInPlans()) {
      inverse.emplace(in_plan, saved);
    }
    return inverse;
  }();
  return renameScopeOps(graph.block(), as_saved);
}

std::shared_ptr<Graph> PreoptimizedCopy(const std::shared_ptr<Graph>& graph) {
  std::shared_ptr<Graph> copy = graph->copy();
  Inline(*copy);
  removeCastsOfNone(copy->block());
  guardTransposePairs(copy->block());
  PeepholeOptimize(copy, /*disable_shape_peepholes=*/true);
  removeGuards(copy->block());
  ConstantPropagationImmutableTypes(copy);
  ConstantPooling(copy);
  return copy;
}

} // namespace jitamp
