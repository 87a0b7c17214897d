#include "passes/hoist_loop_casts.h"

#include "ir/block_walk.h"
#include "ir/jitamp_ir.h"

#include <torch/csrc/jit/ir/alias_analysis.h>
#include <torch/csrc/jit/ir/ir.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_set>
#include <utility>

namespace jitamp {

using namespace torch::jit;

namespace {

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
  return anyNode(block, [](const Node* node) {
    const Symbol kind = node->kind();
    if (kind == prim::Enter || kind == prim::Exit ||
        kind == prim::CallFunction || kind == prim::CallMethod ||
        kind == kSetGradEnabled || hasTaskSubgraph(node)) {
      return true;
    }
    const std::string name = kind.toQualString();
    return !isSmartCast(node) && kind != ops::kToFp16BeforeLoop &&
        (name.rfind("jitamp::", 0) == 0 ||
         name.find("autocast") != std::string::npos);
  });
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

  bool run() {
    forEachNode(graph_->block(), [this](Node* node) {
      if (node->kind() == prim::Loop &&
          !mayChangeCastState(node->blocks().at(0))) {
        hoistOutOf(node);
      }
    });
    return changed_;
  }

 private:
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
      changed_ = true;
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
      forEachNode(graph_->block(), [this](Node* node) {
        if (node->kind() == prim::SetAttr) {
          set_attributes_->insert(node->s(attr::name));
        }
      });
    }
    return set_attributes_->count(get->s(attr::name)) == 0;
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
  bool changed_ = false;
};

} // namespace

bool HoistLoopCasts(const std::shared_ptr<Graph>& graph) {
  return LoopCastHoister(graph).run();
}

} // namespace jitamp
