#include "repairs/repair_frozen_call_stacks.h"

#include "ir/block_walk.h"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/api/module.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace jitamp {

using namespace torch::jit;

namespace {

// torch.jit.freeze inlines the module's methods into the ones it keeps,
// then deletes every method of the frozen module's types that it no longer
// needs (CompilationUnit::unsafeRemoveMethod frees the Function). The
// inlined nodes keep a raw pointer to each of those Functions in their
// InlinedCallStack, and the interpreter reads its name when it reports an
// error raised in inlined code: a use after free, in every torch jitamp
// supports (a wrong frame name in the error, or a crash; found by the
// fuzzer on frozen jitamp models, seen in plain TorchScript too). What
// follows points each call-stack entry whose method its class no longer
// has at a Function of the same name that lives as long as the process.
class FrozenCallStackRepair {
 public:
  void repairModule(const Module& module) {
    forEachMethod(module, [this](Function& method) {
      if (method.isGraphFunction()) {
        repairBlock(toGraphFunction(method).graph()->block());
      }
    });
  }

 private:
  void repairBlock(Block* block) {
    forEachNode(
        block,
        [this](Node* node) {
          if (auto callstack = node->callstack()) {
            InlinedCallStackPtr fixed = repaired(*callstack);
            if (fixed.get() != callstack->get()) {
              node->setCallStack(std::move(fixed));
            }
          }
        },
        Subgraphs::Visit);
  }

  // Inlining a method records the class it was called on; a method the
  // class still has is alive. Free functions (no class) are never deleted
  // by freezing. Only pointers are compared: nothing is read from `fn`.
  static bool deleted(const InlinedCallStack& entry) {
    Function* fn = entry.function();
    const auto instance = entry.module_instance();
    if (fn == nullptr || !instance || !instance->class_type()) {
      return false;
    }
    const auto& methods = instance->class_type()->methods();
    return std::find(methods.begin(), methods.end(), fn) == methods.end();
  }

  // One Function per name, never freed: all the interpreter asks of it is
  // its name.
  static Function* standIn(const std::string& name) {
    static std::mutex mutex;
    static auto* stand_ins =
        new std::unordered_map<std::string, std::unique_ptr<GraphFunction>>();
    const std::lock_guard<std::mutex> guard(mutex);
    auto& stand_in = (*stand_ins)[name];
    if (!stand_in) {
      stand_in = std::make_unique<GraphFunction>(
          c10::QualifiedName(c10::QualifiedName("__jitamp_freed__"), name),
          std::make_shared<Graph>(),
          nullptr);
    }
    return stand_in.get();
  }

  // The same list with deleted methods replaced; shared tails stay shared
  // (memo), unchanged lists are returned as they are.
  InlinedCallStackPtr repaired(const InlinedCallStackPtr& entry) {
    if (auto it = memo_.find(entry.get()); it != memo_.end()) {
      return it->second.second;
    }
    const auto callee = entry->callee();
    std::optional<InlinedCallStackPtr> new_callee;
    if (callee) {
      new_callee = repaired(*callee);
    }
    const bool dead = deleted(*entry);
    InlinedCallStackPtr result = entry;
    if (dead || (callee && new_callee->get() != callee->get())) {
      Function* fn = dead ? standIn(entry->function_name()) : entry->function();
      std::string name = entry->function_name();
      result = new_callee
          ? c10::make_intrusive<InlinedCallStack>(
                *new_callee,
                fn,
                entry->source_range(),
                entry->module_instance(),
                name)
          : c10::make_intrusive<InlinedCallStack>(
                fn, entry->source_range(), entry->module_instance(), name);
    }
    memo_.emplace(entry.get(), std::make_pair(entry, result));
    return result;
  }

  // original -> (original, repaired): holding the original keeps its
  // address from being reused while the walk runs
  std::unordered_map<
      const InlinedCallStack*,
      std::pair<InlinedCallStackPtr, InlinedCallStackPtr>>
      memo_;
};

} // namespace

void RepairFrozenCallStacks(const Module& module) {
  FrozenCallStackRepair().repairModule(module);
}

} // namespace jitamp
