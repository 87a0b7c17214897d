# lower_precision_fp: torch.matmul and the @ operator both lower to
# aten::matmul, and each call gets its own pair of casts.
# RUN: jitamp dump %s:matmul_twice | filecheck %s
import torch


def matmul_twice(x, y):
    with torch.autocast("cpu"):
        a = torch.matmul(x, y)
        b = x @ y
        z = a + b
    return z

# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: [[Y1:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%y.1, [[DEV]], [[R]])
# CHECK-NEXT: [[X1:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV]], [[R]])
# CHECK-NEXT: %a.1 : Tensor = aten::matmul([[X1]], [[Y1]])
# CHECK-NEXT: [[Y2:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%y.1, [[DEV]], [[R]])
# CHECK-NEXT: [[X2:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV]], [[R]])
# CHECK-NEXT: %b.1 : Tensor = aten::matmul([[X2]], [[Y2]])
# aten::add is on no list: it takes the matmul results as they are.
# CHECK-NEXT: %z.1 : Tensor = aten::add(%a.1, %b.1,
# CHECK-NEXT: jitamp::autocast_exit([[G]])
