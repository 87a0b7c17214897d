# repair_frozen_call_stacks (first step of the freeze and standalone_freeze
# pipelines; repairs/repair_frozen_call_stacks.h) repairs a TorchScript bug
# that 2.13 still has: torch.jit.freeze inlines the methods of submodules
# into forward and then deletes them (CompilationUnit::unsafeRemoveMethod
# frees each Function), while the inlined nodes keep raw Function pointers
# in their InlinedCallStack. When inlined code raises, the interpreter reads
# each frame's name through them: a use after free (plain TorchScript
# prints a wrong frame name; a frozen jitamp model crashed; docs/facts.md).
# The pass points every call-stack entry whose class no longer has its
# method at a stand-in Function of the same name that lives as long as the
# process. It changes no node, input or output, and `jitamp opt` prints no
# call stacks, so the IR text cannot show the repair: this case shows only
# that the frozen graph it takes, Sub.forward's addmm inlined from a deleted
# method (no prim::CallMethod left), is left intact (its casts, not yet
# folded, and the scope ops). The checks would pass if the pass did nothing;
# the repair itself is tested by running such a model into an error raised
# in inlined code (tests/test_freeze.py,
# test_error_in_inlined_submodule_code_of_a_frozen_model). No step comes
# before it, so there is no BEFORE run.
# RUN: jitamp opt %s:Net --passes=repair_frozen_call_stacks | filecheck %s
import torch
from torch import Tensor, nn


class Sub(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 4))

    def forward(self, a: Tensor) -> Tensor:
        return torch.addmm(a, self.w, a)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.sub = Sub()

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return self.sub(x)

# CHECK-NOT: prim::CallMethod
# CHECK: %self.sub.w : Float(4, 4, {{.*}} = prim::Constant[value={{.*}}]()
# CHECK: jitamp::autocast_enter(
# CHECK-NEXT: [[R:%[^ ]+]] : int = jitamp::autocast_caller_region()
# CHECK-NEXT: [[A:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, {{%[^ ]+}}, [[R]])
# CHECK-NEXT: [[W:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%self.sub.w, {{%[^ ]+}}, [[R]])
# CHECK-NEXT: [[Y:%[^ ]+]] : Tensor = aten::addmm([[A]], [[W]], [[A]],
# CHECK-NEXT: jitamp::autocast_exit(
# CHECK-NEXT: return ([[Y]])
# CHECK-NOT: prim::CallMethod
