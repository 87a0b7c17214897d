# preoptimize_module (pipeline/function_rewrite.h; in standalone_freeze
# after keep_constants_apart and again last, in freeze last): TorchScript's
# executors compile, and callers inline, a function's optimized graph, which
# jitamp's rewrite made (its preoptimization) before the first call, with
# jitamp's plan; a graph changed after that (folded, stripped) needs both
# made again, or the executor would run the graph as it was before the
# freeze steps. The step makes them again for every method that has not run
# and holds jitamp's optimized graph. The RUN lines take standalone_freeze's
# steps, whose rewrite_module configured the frozen copy (`jitamp opt`'s
# freeze steps start from a copy frozen by torch.jit.freeze alone, which
# only rewrite_module or jitamp's freeze hook configures: without one, this
# step finds no method to remake and does nothing). It writes only the
# optimized graph and the plan: the method's own graph, which `jitamp opt`
# prints, is left as the steps before left it (and here the preoptimized
# copy equals it too: freezing has inlined and optimized it already). The
# IR text cannot show the step: this case checks that the graph it takes
# (BEFORE run: folded, BFloat16 weight constants) is left intact, which
# would pass if it did nothing. That the executors run the remade graph is
# tested by running frozen models (tests/test_freeze.py,
# test_standalone_has_no_jitamp_op_and_matches_eager: after
# strip_static_scopes and this step, the graph the executor last ran holds
# no jitamp op).
# RUN: jitamp opt %s:Net --passes=rewrite_module,repair_frozen_call_stacks,fold_static_casts,keep_constants_apart | filecheck %s --check-prefix BEFORE
# RUN: jitamp opt %s:Net --passes=rewrite_module,repair_frozen_call_stacks,fold_static_casts,keep_constants_apart,preoptimize_module | filecheck %s
import torch
from torch import Tensor, nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = torch.relu(self.conv(x))
        return y.float()

# BEFORE: %self.conv.weight_BFloat16 : BFloat16(8, 3, 3, 3, {{.*}} = prim::Constant[value={{.*}}]()
# BEFORE-NOT: %self.conv.weight :
# BEFORE: [[E:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, {{%[^ ]+}} : int = jitamp::autocast_enter(
# BEFORE-NEXT: [[R:%[^ ]+]] : int = jitamp::autocast_caller_region()
# BEFORE-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, {{%[^ ]+}}, [[R]])
# BEFORE-NEXT: [[C:%[^ ]+]] : Tensor = aten::conv2d([[X]], %self.conv.weight_BFloat16, %self.conv.bias_BFloat16,
# BEFORE-NEXT: %y.1 : Tensor = aten::relu([[C]])
# BEFORE-NEXT: jitamp::autocast_exit([[E]])
# BEFORE-NEXT: aten::to(%y.1,

# CHECK: %self.conv.weight_BFloat16 : BFloat16(8, 3, 3, 3, {{.*}} = prim::Constant[value={{.*}}]()
# CHECK-NOT: %self.conv.weight :
# CHECK: [[E:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, {{%[^ ]+}} : int = jitamp::autocast_enter(
# CHECK-NEXT: [[R:%[^ ]+]] : int = jitamp::autocast_caller_region()
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, {{%[^ ]+}}, [[R]])
# CHECK-NEXT: [[C:%[^ ]+]] : Tensor = aten::conv2d([[X]], %self.conv.weight_BFloat16, %self.conv.bias_BFloat16,
# CHECK-NEXT: %y.1 : Tensor = aten::relu([[C]])
# CHECK-NEXT: jitamp::autocast_exit([[E]])
# CHECK-NEXT: aten::to(%y.1,
