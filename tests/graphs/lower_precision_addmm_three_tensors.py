# lower_precision_fp: addmm casts all three tensors (the added matrix too);
# the scalar beta/alpha arguments are left alone.
# RUN: jitamp dump %s:affine | filecheck %s
import torch


def affine(a, x, y):
    with torch.autocast("cpu"):
        z = torch.addmm(a, x, y, beta=0.5)
    return z

# CHECK-LABEL: graph(%a.1 : Tensor,
# CHECK: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# CHECK: [[BETA:%[^ ]+]] : float = prim::Constant[value=0.5]()
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: [[Y:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%y.1, [[DEV]], [[R]])
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV]], [[R]])
# CHECK-NEXT: [[A:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%a.1, [[DEV]], [[R]])
# CHECK-NEXT: %z.1 : Tensor = aten::addmm([[A]], [[X]], [[Y]], [[BETA]],
# CHECK-NEXT: jitamp::autocast_exit([[G]])
