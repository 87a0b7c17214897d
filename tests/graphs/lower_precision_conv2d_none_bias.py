# lower_precision_fp: F.conv2d casts input and weight; the None bias (a
# constant) gets no cast and reaches the op unchanged.
# RUN: jitamp dump %s:conv_no_bias | filecheck %s
import torch
import torch.nn.functional as F


def conv_no_bias(x, w):
    with torch.autocast("cpu"):
        y = F.conv2d(x, w)
    return y

# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# CHECK: [[NONE:%[^ ]+]] : NoneType = prim::Constant()
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: [[W:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%w.1, [[DEV]], [[R]])
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV]], [[R]])
# CHECK-NEXT: %y.1 : Tensor = aten::conv2d([[X]], [[W]], [[NONE]],
# CHECK-NEXT: jitamp::autocast_exit([[G]])
# CHECK-NOT: jitamp::autocast_to_fp16([[NONE]]
