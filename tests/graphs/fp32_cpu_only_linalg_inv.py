# fp32 on CPU only: torch.linalg.inv (aten::linalg_inv) casts its input to
# float32 with devices "cpu" and nothing for CUDA.
# RUN: jitamp dump %s:invert | filecheck %s
import torch


def invert(x):
    with torch.autocast("cpu"):
        y = torch.linalg.inv(x)
    return y

# CHECK-LABEL: graph(%x.1 : Tensor):
# CHECK-NOT: cuda"
# CHECK: [[CPU:%[^ ]+]] : str = prim::Constant[value="cpu"]()
# CHECK-NOT: cuda"
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%x.1, [[CPU]], [[R]])
# CHECK-NEXT: %y.1 : Tensor = aten::linalg_inv([[X]])
# CHECK-NEXT: jitamp::autocast_exit([[G]])
# CHECK-NOT: jitamp::autocast_to_fp16
