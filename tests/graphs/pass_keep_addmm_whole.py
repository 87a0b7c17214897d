# keep_addmm_whole (profiling executor's plan, after
# insert_autodiff_boundaries; KeepAddmmWhole in passes/keep_addmm_whole.h):
# the profiling executor's DecomposeOps splits an aten::addmm whose beta and
# alpha are both the constant 1 into mm + add, rounding twice where eager's
# addmm rounds once (0.25 off eager on a 64x64 bfloat16 result under
# autocast). Such an addmm reads beta through jitamp::autocast_dependent
# (the scalar overload), which no pass folds, so DecomposeOps leaves it
# whole. The case shows the addmm of the bfloat16 scope (beta and alpha
# default 1) and one whose beta is an argument (it may become 1 where a
# caller inlines the graph) reading beta so, and the addmm with beta=2,
# which DecomposeOps does not split, keeping its constant. The BEFORE run
# shows the graph the pass takes (rewritten, configured, preoptimized, with
# the plan's autodiff boundaries).
# RUN: jitamp opt %s:addmms --passes=rewrite,configure,preoptimize,insert_autodiff_boundaries | filecheck %s --check-prefix BEFORE
# RUN: jitamp opt %s:addmms --passes=rewrite,configure,preoptimize,insert_autodiff_boundaries,keep_addmm_whole | filecheck %s
from typing import Tuple

import torch
from torch import Tensor


def addmms(b, x, w, beta: float) -> Tuple[Tensor, Tensor, Tensor]:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = torch.addmm(b, x, w)
    z = torch.addmm(b, x, w, beta=2)
    u = torch.addmm(b, x, w, beta=beta)
    return y, z, u

# BEFORE: [[TWO:%[^ ]+]] : int = prim::Constant[value=2]()
# BEFORE: [[ONE:%[^ ]+]] : int = prim::Constant[value=1]()
# BEFORE: %y.1 : Tensor = aten::addmm(%{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}}, [[ONE]], [[ONE]])
# BEFORE: %z.1 : Tensor = aten::addmm(%{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}}, [[TWO]], [[ONE]])
# BEFORE: %u.1 : Tensor = aten::addmm(%{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}}, %beta.1, [[ONE]])
# BEFORE-NOT: jitamp::autocast_dependent

# CHECK: [[CR:%[^ ]+]] : int = jitamp::autocast_caller_region()
# CHECK: [[TWO:%[^ ]+]] : int = prim::Constant[value=2]()
# CHECK: [[ONE:%[^ ]+]] : int = prim::Constant[value=1]()
# CHECK: jitamp::autocast_enter(
# CHECK: [[B1:%[^ ]+]] : int = jitamp::autocast_dependent([[ONE]], [[CR]])
# CHECK-NEXT: %y.1 : Tensor = aten::addmm(%{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}}, [[B1]], [[ONE]])
# CHECK-NEXT: jitamp::autocast_exit(
# CHECK-NOT: jitamp::autocast_dependent
# CHECK: %z.1 : Tensor = aten::addmm(%{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}}, [[TWO]], [[ONE]])
# CHECK: [[BA:%[^ ]+]] : float = jitamp::autocast_dependent(%beta.1, [[CR]])
# CHECK-NEXT: %u.1 : Tensor = aten::addmm(%{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}}, [[BA]], [[ONE]])
