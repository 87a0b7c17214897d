// The autocast scopes open at a point of a walk over lowered IR, shared by
// the passes that walk it in program order (lower_autocast_scopes.cpp,
// insert_smart_casts.cpp).
#pragma once

#include "jitamp_ir.h"

#include <vector>

namespace jitamp {

struct OpenScope {
  torch::jit::Value* autocast; // the autocast object
  torch::jit::Value* guard; // output 0 of jitamp::autocast_enter
  torch::jit::Value* region; // output 1: the token of the scope's region
  torch::jit::Block* block; // where the scope was entered
};

class OpenScopes {
 public:
  // Follows jitamp::autocast_enter / autocast_exit nodes; returns whether
  // `node` was one of them.
  bool track(torch::jit::Node* node) {
    if (node->kind() == ops::kEnter) {
      open_.push_back(
          {node->input(0), node->output(0), node->output(1),
           node->owningBlock()});
      return true;
    }
    if (node->kind() == ops::kExit) {
      close(node->input(0), node->owningBlock());
      return true;
    }
    return false;
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

 private:
  // An exit in another block than the enter's (on a break/continue path
  // inside the scope) leaves the scope open for the exit that ends the
  // enter's block.
  void close(const torch::jit::Value* guard, const torch::jit::Block* block) {
    for (auto scope = open_.rbegin(); scope != open_.rend(); ++scope) {
      if (scope->guard == guard) {
        if (scope->block == block) {
          open_.erase(std::next(scope).base());
        }
        return;
      }
    }
  }

  std::vector<OpenScope> open_;
};

} // namespace jitamp
