// Keeping a value from TorchScript's optimizations in a model that holds no
// jitamp op: a read of a module attribute. Header-only; shared by
// keep_addmm_whole.cpp, keep_constants_apart.cpp and keep_mms_unbatched.cpp.
//
// TorchScript's executors fold no `prim::GetAttr` of a module that is not
// frozen, and loading pools constants, never attributes (torch.jit.freeze
// folds the read: freezing the model again undoes it). Where a graph may
// hold jitamp's ops, a fold barrier does this (fold_barriers.h). Both and
// the exceptions: docs/passes.md, 'Keeping nodes from TorchScript's
// optimizations'.
#pragma once

#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/ir.h>

#include <string>

namespace jitamp {

// A read of `module`'s attribute `name`, registered as `value` of `type`
// (throws if the module has an attribute of that name of another type),
// inserted at `graph`'s insert point. `graph` is a method of `module`: its
// first input, self, is read.
inline torch::jit::Value* readModuleAttribute(
    torch::jit::Module module, // a handle: register_attribute is not const
    torch::jit::Graph& graph,
    const std::string& name,
    const c10::TypePtr& type,
    const c10::IValue& value) {
  module.register_attribute(name, type, value);
  torch::jit::Value* self = graph.inputs().at(0);
  TORCH_INTERNAL_ASSERT(self->type() == module.type());
  return graph.insertNode(graph.createGetAttr(self, name))->output();
}

} // namespace jitamp
