# fp32_set_opt_dtype with a constant dtype: eager leaves the op alone on
# CUDA, so softmax(x, 1, float64) gets no cast at all.
# RUN: jitamp dump %s:probs64 | filecheck %s
import torch


def probs64(x):
    with torch.autocast("cpu"):
        p = torch.softmax(x, 1, torch.float64)
    return p

# CHECK-LABEL: graph(%x.1 : Tensor):
# CHECK-NOT: jitamp::autocast_to
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: %p.1 : Tensor = aten::softmax(%x.1,
# CHECK-NEXT: jitamp::autocast_exit([[G]])
# CHECK-NOT: jitamp::autocast_to
