// Module pass (frozen models): tensor constants that loading's constant
// pooling would merge across layouts are read from module attributes.
#pragma once

namespace torch::jit {
struct Module;
} // namespace torch::jit

namespace jitamp {

// For a frozen model that is saved: loading compiles each method again, and
// its constant pooling merges tensor constants of equal values (dtype,
// device, sizes) whose types no longer tell their strides apart (a weight
// and a folded view of the same values, such as a slice of a reflect pad),
// so an op is handed another layout than eager's, and a kernel that sums in
// another order there rounds otherwise (linear: 1 ulp off eager, every
// loader). Each tensor constant of a method of `module` (not its
// submodules') that pooling would merge with an earlier one laid out
// otherwise (strides, storage offset) is read instead from an attribute of
// the module holding it, `_pooled_apart_constant_<n>`, which no pass pools
// (serialization keeps its layout); freezing the model again would undo
// it. Run by FoldStaticCastsInModule. Returns whether it changed a graph
// (which then needs PreoptimizeModule).
bool KeepConstantsApartInModule(const torch::jit::Module& module);

} // namespace jitamp
