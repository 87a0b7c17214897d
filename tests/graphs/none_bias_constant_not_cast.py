# A None constant in a `Tensor?` position is not cast: F.linear(x, w) casts
# x and w only, and passes the None straight to aten::linear.
# RUN: jitamp dump %s:linear_no_bias | filecheck %s
import torch
import torch.nn.functional as F


def linear_no_bias(x, w):
    with torch.autocast("cpu"):
        y = F.linear(x, w)
    return y

# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# CHECK: [[NONE:%[^ ]+]] : NoneType = prim::Constant()
# CHECK-NOT: jitamp::autocast_to_fp16([[NONE]]
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: [[W:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%w.1, [[DEV]], [[R]])
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV]], [[R]])
# CHECK-NEXT: %y.1 : Tensor = aten::linear([[X]], [[W]], [[NONE]])
# CHECK-NEXT: jitamp::autocast_exit([[G]])
# CHECK-NOT: Tensor? = jitamp::autocast_to_fp16
