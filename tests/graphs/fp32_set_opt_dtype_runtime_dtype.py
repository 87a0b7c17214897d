# fp32_set_opt_dtype with a run-time Optional dtype: the if_no_dtype overload
# autocast_to_fp32(x, "cuda", dtype) takes the same dtype value the op gets.
# RUN: jitamp dump %s:probs_as | filecheck %s --check-prefix SOFTMAX
# RUN: jitamp dump %s:total_as | filecheck %s --check-prefix SUM
from typing import Optional

import torch


def probs_as(x, dt: Optional[int]):
    with torch.autocast("cpu"):
        p = torch.softmax(x, 1, dt)
    return p


def total_as(x, dt: Optional[torch.dtype]):
    with torch.autocast("cpu"):
        s = torch.sum(x, dtype=dt)
    return s

# SOFTMAX-LABEL: graph(%x.1 : Tensor,
# SOFTMAX-NEXT: %dt.1 : int?):
# SOFTMAX: [[CUDA:%[^ ]+]] : str = prim::Constant[value="cuda"]()
# SOFTMAX: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# The if_no_dtype overload: (self, devices, dtype, region), the region last.
# SOFTMAX-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%x.1, [[CUDA]], %dt.1, [[R]]){{$}}
# SOFTMAX-NEXT: %p.1 : Tensor = aten::softmax([[X]], {{%[^ ]+}}, %dt.1)
# SOFTMAX-NEXT: jitamp::autocast_exit([[G]])

# SUM-LABEL: graph(%x.1 : Tensor,
# SUM: [[CUDA:%[^ ]+]] : str = prim::Constant[value="cuda"]()
# SUM: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# SUM-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%x.1, [[CUDA]], %dt.1, [[R]]){{$}}
# SUM-NEXT: %s.1 : Tensor = aten::sum([[X]], %dt.1)
# SUM-NEXT: jitamp::autocast_exit([[G]])
