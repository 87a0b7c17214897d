// Repairs the call stacks of nodes that torch.jit.freeze inlined from
// methods it then deleted (a use after free when TorchScript reports an
// error raised in inlined code; every torch jitamp supports).
#pragma once

namespace torch::jit {
struct Module;
} // namespace torch::jit

namespace jitamp {

// Points each call-stack entry of every method of `module` and its
// submodules whose method its class no longer has at a Function of the
// same name that lives as long as the process.
void RepairFrozenCallStacks(const torch::jit::Module& module);

} // namespace jitamp
