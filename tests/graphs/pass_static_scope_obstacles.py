# static_scope_obstacles (standalone_freeze pipeline, after the folding and
# preoptimize_module; StaticScopeObstacles in passes/strip_static_scopes.h)
# is a check, not a rewrite: before strip_static_scopes removes jitamp's
# ops, it names every line of every method that cannot do without them,
# for a caller whose autocast is off, and raises ValueError listing them
# (`jitamp.freeze(standalone=True): the frozen model needs jitamp's ops:`).
# It checks that every scope is a CPU scope with constant enabled and
# dtype (a scope without dtype, `torch.autocast("cpu")`, reads the thread's
# dtype at run time: an obstacle; so is `enabled=flag`), that every smart
# cast left can be spelled with stock ops (Tensor casts to fp16/fp32 in an
# enabled scope, or casts that do nothing where CPU autocast is off; not
# promote casts or list casts in an enabled scope), that every op in an
# enabled scope gives eager's result with the thread's autocast off once
# its casts are explicit (not a CompositeImplicitAutograd op whose
# decomposition eager autocasts), and that there is no forked task. On an
# obstacle `jitamp opt` prints the error and exits 2, which a RUN line
# cannot take (lit requires success), so this case shows a model without
# obstacles (a static bfloat16 scope, a disabled scope inside it, an op
# outside every scope): the step accepts it and leaves the graph as the
# BEFORE run shows it, scope ops and casts included (it strips nothing).
# The refusals are tested in tests/test_freeze.py
# (test_standalone_refuses_dynamic_scopes_and_says_why and the tests after it).
# RUN: jitamp opt %s:Net --passes=rewrite_module,repair_frozen_call_stacks,fold_static_casts,keep_constants_apart,preoptimize_module | filecheck %s --check-prefix BEFORE
# RUN: jitamp opt %s:Net --passes=rewrite_module,repair_frozen_call_stacks,fold_static_casts,keep_constants_apart,preoptimize_module,static_scope_obstacles | filecheck %s
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

# BEFORE: %self.a.weight_BFloat16 : BFloat16(4, 4,
# BEFORE: jitamp::autocast_enter(
# BEFORE: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1,
# BEFORE-NEXT: %y.1 : Tensor = aten::linear([[X]], %self.a.weight_BFloat16, %self.a.bias_BFloat16)
# BEFORE: jitamp::autocast_enter(
# BEFORE: jitamp::autocast_to_fp16(
# BEFORE-NEXT: %z.1 : Tensor = aten::linear(%{{[^ ]+}}, %self.b.weight, %self.b.bias)
# BEFORE-NEXT: jitamp::autocast_exit(
# BEFORE-NEXT: jitamp::autocast_exit(
# BEFORE-NEXT: aten::relu(%z.1)

# CHECK: %self.a.weight_BFloat16 : BFloat16(4, 4,
# CHECK: jitamp::autocast_enter(
# CHECK: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1,
# CHECK-NEXT: %y.1 : Tensor = aten::linear([[X]], %self.a.weight_BFloat16, %self.a.bias_BFloat16)
# CHECK: jitamp::autocast_enter(
# CHECK: jitamp::autocast_to_fp16(
# CHECK-NEXT: %z.1 : Tensor = aten::linear(%{{[^ ]+}}, %self.b.weight, %self.b.bias)
# CHECK-NEXT: jitamp::autocast_exit(
# CHECK-NEXT: jitamp::autocast_exit(
# CHECK-NEXT: aten::relu(%z.1)
