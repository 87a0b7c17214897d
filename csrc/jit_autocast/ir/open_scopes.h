// The autocast scopes open at a point of a walk over lowered IR, shared by
// the passes that walk it in program order (lower_autocast_scopes.cpp,
// insert_smart_casts.cpp, and through static_scopes.h the passes on frozen
// graphs).
#pragma once

#include "ir/jitamp_ir.h"

#include <algorithm>
#include <optional>
#include <vector>

namespace jitamp {

struct OpenScope {
  torch::jit::Value* autocast; // the autocast object
  torch::jit::Value* guard; // output 0 of jitamp::autocast_enter
  torch::jit::Value* region; // output 1: the token of the scope's region
  // Some path to this point may have closed it: a branch of an if, or a
  // loop body, exited it (an early return, break or continue), another did
  // not. Whether it is open here is known only at run time.
  bool maybe_closed = false;
};

class OpenScopes {
 public:
  // Follows jitamp::autocast_enter / autocast_exit nodes; returns whether
  // `node` was one of them.
  bool track(torch::jit::Node* node) {
    if (isEnter(node)) {
      open_.push_back({node->input(0), node->output(0), node->output(1), false});
      return true;
    }
    if (node->kind() == ops::kExit) {
      close(node->input(0));
      return true;
    }
    return false;
  }

  // Walks the blocks of `node` with `walk(block)`. An exit inside a block
  // (on a break, continue or early-return path) closes its scope for the
  // rest of that block only. After the node a scope stays closed only if
  // every branch of an if closed it: TorchScript's exit transform puts the
  // code after an early return in the other branch, so a scope left on
  // every path is closed for what follows; a loop body may not run. A scope
  // that some branch or body closed and another did not stays, marked
  // maybe_closed: the exit transform guards what follows with ifs on its
  // flags, whose branches may be inside the scope or after it.
  template <typename Walk>
  void walkBlocks(torch::jit::Node* node, Walk&& walk) {
    if (node->blocks().empty()) {
      return; // most nodes: no copy of the open scopes
    }
    const std::vector<OpenScope> before = open_;
    std::optional<std::vector<OpenScope>> common;
    bool agree = node->kind() == c10::prim::If;
    std::vector<const torch::jit::Value*> closed; // by some block
    for (torch::jit::Block* block : node->blocks()) {
      open_ = before;
      walk(block);
      for (const OpenScope& scope : before) {
        if (!holds(open_, scope.guard)) {
          closed.push_back(scope.guard);
        }
      }
      if (!common) {
        common = open_;
      } else if (!sameScopes(*common, open_)) {
        agree = false;
      }
    }
    if (agree && common) {
      open_ = *common;
      return;
    }
    open_ = before;
    for (OpenScope& scope : open_) {
      if (std::find(closed.begin(), closed.end(), scope.guard) != closed.end()) {
        scope.maybe_closed = true;
      }
    }
  }

  // The innermost open scope, or nullptr outside any scope.
  const OpenScope* innermost() const {
    return open_.empty() ? nullptr : &open_.back();
  }

  const OpenScope* findByAutocast(const torch::jit::Value* autocast) const {
    for (auto scope = open_.rbegin(); scope != open_.rend(); ++scope) {
      if (scope->autocast == autocast) {
        return &*scope;
      }
    }
    return nullptr;
  }

  // The open scopes, outermost first.
  const std::vector<OpenScope>& all() const {
    return open_;
  }

 private:
  void close(const torch::jit::Value* guard) {
    for (auto scope = open_.rbegin(); scope != open_.rend(); ++scope) {
      if (scope->guard == guard) {
        open_.erase(std::next(scope).base());
        return;
      }
    }
  }

  static bool holds(
      const std::vector<OpenScope>& scopes,
      const torch::jit::Value* guard) {
    return std::any_of(scopes.begin(), scopes.end(), [&](const OpenScope& s) {
      return s.guard == guard;
    });
  }

  static bool sameScopes(
      const std::vector<OpenScope>& a,
      const std::vector<OpenScope>& b) {
    return std::equal(
        a.begin(), a.end(), b.begin(), b.end(),
        [](const OpenScope& x, const OpenScope& y) {
          return x.guard == y.guard;
        });
  }

  std::vector<OpenScope> open_;
};

} // namespace jitamp
