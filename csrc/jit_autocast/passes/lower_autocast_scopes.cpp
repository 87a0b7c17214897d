#include "passes/lower_autocast_scopes.h"

#include "ir/jitamp_ir.h"
#include "ir/open_scopes.h"

#include <torch/csrc/jit/jit_log.h>

#include <string>

namespace jitamp {

using namespace torch::jit;

namespace {

// Raises RuntimeError with `message` and `node`'s source, highlighted, as
// TorchScript's front end shows an error. Not torch::jit::ErrorReport: its
// object would be laid out, copied and destroyed partly by this library's
// compiler (its destructor is inline) and partly by LibTorch's, and where
// the two disagree on its layout the throw frees a wrong pointer (seen on
// torch 2.11 built here with another g++). c10::Error is made and destroyed
// in c10 alone.
[[noreturn]] void refuse(const Node* node, const std::string& message) {
  TORCH_CHECK(false, message, ":\n", node->sourceRange().str());
}

EagerEnterResult& eagerEnterResult() {
  static EagerEnterResult result;
  return result;
}

class ScopeLowering {
 public:
  explicit ScopeLowering(Graph& graph) : graph_(graph) {}

  bool run() {
    lowerBlock(graph_.block());
    return changed_;
  }

 private:
  void lowerBlock(Block* block) {
    for (auto it = block->nodes().begin(); it != block->nodes().end();) {
      Node* node = *it;
      ++it; // the node may be destroyed below
      if (node->kind() == prim::Enter &&
          isAutocastClass(node->input()->type())) {
        lowerEnter(node);
      } else if (
          node->kind() == prim::Exit &&
          isAutocastClass(node->input()->type())) {
        lowerExit(node);
      } else if (!scopes_.track(node)) {
        scopes_.walkBlocks(node, [this](Block* sub) { lowerBlock(sub); });
      }
    }
  }

  void lowerEnter(Node* enter) {
    Value* autocast = enter->input();
    WithInsertPoint guard(enter);
    Node* lowered = graph_.create(ops::kEnter, {autocast}, 2);
    lowered->output(0)->setType(jitampClass("AutocastGuard"));
    lowered->output(1)->setType(IntType::get());
    lowered->setSourceRange(enter->sourceRange());
    graph_.insertNode(lowered);
    if (eagerEnterResult().is_none) {
      bindNone(enter->output());
    }
    // `with autocast(...) as ac`: __enter__ returns self.
    enter->output()->replaceAllUsesWith(autocast);
    scopes_.track(lowered);
    GRAPH_UPDATE("Lowered ", *enter, " to ", *lowered);
    enter->destroy();
    changed_ = true;
  }

  // `as ac` where eager binds None (see EagerEnterResult): each use of `ac`
  // raises what eager raises there, when it runs.
  void bindNone(Value* bound) {
    const EagerEnterResult& eager = eagerEnterResult();
    const std::vector<Use> uses = bound->uses();
    for (const Use& use : uses) {
      Node* user = use.user;
      if (user->kind() == prim::Exit) {
        continue; // follows the prim::Enter of its scope, which raises
      }
      if (user->kind() == prim::Enter) {
        raiseBefore(
            user, eager.with_none_error_class, eager.with_none_error_message);
      } else if (
          user->kind() == prim::GetAttr || user->kind() == prim::CallMethod) {
        const std::string name = user->s(attr::name);
        raiseBefore(
            user,
            "builtins.AttributeError",
            "'NoneType' object has no attribute '" + name + "'");
      } else {
        refuse(
            user,
            "jitamp: on this torch, eager's autocast.__enter__ returns None, "
            "so `with torch.autocast(...) as " +
                (bound->hasDebugName() ? bound->debugNameBase()
                                       : std::string("name")) +
                "` binds None, which the scripted code cannot be given. "
                "Build the object first and enter it: "
                "`ac = torch.autocast(...)`, then `with ac:`");
      }
    }
  }

  void raiseBefore(Node* user, const std::string& cls, const std::string& message) {
    WithInsertPoint guard(user);
    Value* message_value = graph_.insertConstant(message);
    Value* cls_value = graph_.insertConstant(cls);
    // Not prim::RaiseException: TorchScript's front end, compiling a saved
    // model again, would make what follows unreachable and then delete the
    // ops before that only feed it, ops whose errors eager raises first.
    Node* raise =
        graph_.create(ops::kRaiseAsEager, {message_value, cls_value}, 0);
    raise->setSourceRange(user->sourceRange());
    graph_.insertNode(raise);
    changed_ = true;
  }

  void lowerExit(Node* exit) {
    const OpenScope* scope = scopes_.findByAutocast(exit->input());
    if (scope == nullptr) {
      refuse(
          exit,
          "jitamp: found the end of an autocast scope without its start");
    }
    if (exit->hasUses()) {
      refuse(exit, "jitamp: the result of an autocast __exit__ is used");
    }
    WithInsertPoint guard(exit);
    Node* lowered = graph_.create(ops::kExit, {scope->guard}, 0);
    lowered->setSourceRange(exit->sourceRange());
    graph_.insertNode(lowered);
    scopes_.track(lowered);
    GRAPH_UPDATE("Lowered ", *exit, " to ", *lowered);
    exit->destroy();
    changed_ = true;
  }

  Graph& graph_;
  OpenScopes scopes_;
  bool changed_ = false;
};

} // namespace

bool LowerAutocastScopes(const std::shared_ptr<Graph>& graph) {
  return ScopeLowering(*graph).run();
}

void SetEagerEnterResult(EagerEnterResult result) {
  eagerEnterResult() = std::move(result);
}

} // namespace jitamp
