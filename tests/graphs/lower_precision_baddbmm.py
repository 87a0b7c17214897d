# lower_precision_fp: baddbmm casts its input and both batches, on both
# devices.
# RUN: jitamp dump %s:batched_affine | filecheck %s
import torch


def batched_affine(a, x, y):
    with torch.autocast("cpu"):
        z = torch.baddbmm(a, x, y)
    return z

# CHECK-LABEL: graph(%a.1 : Tensor,
# CHECK: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: [[Y:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%y.1, [[DEV]], [[R]])
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV]], [[R]])
# CHECK-NEXT: [[A:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%a.1, [[DEV]], [[R]])
# CHECK-NEXT: %z.1 : Tensor = aten::baddbmm([[A]], [[X]], [[Y]],
# CHECK-NEXT: jitamp::autocast_exit([[G]])
