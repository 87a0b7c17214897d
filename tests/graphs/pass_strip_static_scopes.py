# strip_static_scopes (standalone_freeze pipeline, after
# static_scope_obstacles; passes/strip_static_scopes.h): a standalone frozen
# model must load in stock LibTorch or torch.jit.load without jitamp, and
# no stock op can set the thread's autocast state. Where every scope is
# static (checked by static_scope_obstacles), the state is known everywhere
# for a caller whose autocast is off, so the pass lowers each smart cast
# left to stock ops and removes the scope ops, the region tokens, the
# cache-flag ops and the autocast objects. In the bfloat16 scope the cast
# of the input becomes eager's `to(bfloat16)` where eager's autocast would
# cast (prim::dtype not bfloat16; floating point, on CPU, not float64:
# prim::If around aten::to); in the disabled scope inside it the
# activation's cast does nothing and is gone; the folded BFloat16 weights
# stay. The BEFORE run shows the graph the pass takes (scope ops and smart
# casts).
# RUN: jitamp opt %s:Net --passes=rewrite_module,repair_frozen_call_stacks,fold_static_casts,keep_constants_apart,preoptimize_module,static_scope_obstacles | filecheck %s --check-prefix BEFORE
# RUN: jitamp opt %s:Net --passes=rewrite_module,repair_frozen_call_stacks,fold_static_casts,keep_constants_apart,preoptimize_module,static_scope_obstacles,strip_static_scopes | filecheck %s
import torch
from torch import Tensor, nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = self.a(x)
            with torch.autocast("cpu", enabled=False):
                z = self.b(y.float())
        return torch.relu(z)

# BEFORE: jitamp::autocast_enter(
# BEFORE: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1,
# BEFORE-NEXT: %y.1 : Tensor = aten::linear([[X]], %self.a.weight_BFloat16, %self.a.bias_BFloat16)
# BEFORE: jitamp::autocast_enter(
# BEFORE: jitamp::autocast_to_fp16(
# BEFORE-NEXT: %z.1 : Tensor = aten::linear(
# BEFORE-NEXT: jitamp::autocast_exit(
# BEFORE-NEXT: jitamp::autocast_exit(

# CHECK-NOT: jitamp::
# CHECK-NOT: prim::CreateObject
# CHECK: %self.a.weight_BFloat16 : BFloat16(4, 4, {{.*}} = prim::Constant[value={{.*}}]()
# CHECK: [[BF16:%[^ ]+]] : int = prim::Constant[value=15]()
# CHECK-NEXT: [[DT:%[^ ]+]] : int = prim::dtype(%x.1)
# CHECK-NEXT: [[NE:%[^ ]+]] : bool = aten::ne([[DT]], [[BF16]])
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor = prim::If([[NE]])
# CHECK: aten::is_floating_point(%x.1)
# CHECK-NEXT: prim::is_cpu(%x.1)
# CHECK: [[TO:%[^ ]+]] : Tensor = aten::to(%x.1, [[BF16]],
# CHECK-NEXT: -> ([[TO]])
# CHECK-NEXT: block1():
# CHECK-NEXT: -> (%x.1)
# CHECK: %y.1 : Tensor = aten::linear([[X]], %self.a.weight_BFloat16, %self.a.bias_BFloat16)
# CHECK: [[F:%[^ ]+]] : Tensor = aten::to(%y.1,
# CHECK-NEXT: %z.1 : Tensor = aten::linear([[F]], %self.b.weight, %self.b.bias)
# CHECK-NEXT: aten::relu(%z.1)
# CHECK-NOT: jitamp::
