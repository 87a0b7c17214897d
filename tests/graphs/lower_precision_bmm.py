# lower_precision_fp: bmm casts both batches on CPU and CUDA alike.
# RUN: jitamp dump %s:batched | filecheck %s
import torch


def batched(x, y):
    with torch.autocast("cpu"):
        z = torch.bmm(x, y)
    return z

# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# CHECK-NOT: prim::Constant[value="cuda"]
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: [[Y:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%y.1, [[DEV]], [[R]])
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV]], [[R]])
# CHECK-NEXT: %z.1 : Tensor = aten::bmm([[X]], [[Y]])
# CHECK-NEXT: jitamp::autocast_exit([[G]])
