# lower_precision_fp: F.linear casts input, weight and bias to the autocast
# dtype on both devices; a bias typed Tensor keeps the plain Tensor overload.
# RUN: jitamp dump %s:linear_with_bias | filecheck %s
import torch
import torch.nn.functional as F


def linear_with_bias(x, w, b):
    with torch.autocast("cpu"):
        y = F.linear(x, w, b)
    return y

# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# CHECK: [[GUARD:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[REGION:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: [[B:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%b.1, [[DEV]], [[REGION]])
# CHECK-NEXT: [[W:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%w.1, [[DEV]], [[REGION]])
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV]], [[REGION]])
# CHECK-NEXT: %y.1 : Tensor = aten::linear([[X]], [[W]], [[B]])
# CHECK-NEXT: jitamp::autocast_exit([[GUARD]])
# CHECK-NOT: jitamp::autocast_to_fp32
