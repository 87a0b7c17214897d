// Module pass (frozen models): tensor constants that loading's constant
// pooling would merge across layouts are read from module attributes.
#pragma once

namespace torch::jit {
struct Module;
} // namespace torch::jit

namespace jitamp {

// For a frozen model that is saved: each tensor constant of a method of
// `module` (not its submodules') that loading's constant pooling would
// merge with an earlier one of equal values laid out otherwise (strides,
// storage offset) is read instead from an attribute of the module holding
// it, `_pooled_apart_constant_<n>` (ir/attribute_reads.h: no pass pools
// it; serialization keeps its layout); freezing the model again would undo
// it. A step of the freeze pipelines (pipeline/pipeline.cpp). Throws if a
// method it would change has already run. Returns whether it changed a
// graph (which then needs PreoptimizeModule). Why: docs/passes.md,
// 'KeepConstantsApartInModule'.
bool KeepConstantsApartInModule(const torch::jit::Module& module);

} // namespace jitamp
