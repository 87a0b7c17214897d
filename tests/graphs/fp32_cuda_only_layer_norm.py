# fp32 on CUDA only: layer_norm casts input, weight and bias (Tensor
# arguments to its Tensor? parameters, so plain Tensor casts) with "cuda".
# RUN: jitamp dump %s:normalize | filecheck %s
import torch


def normalize(x, w, b):
    with torch.autocast("cpu"):
        y = torch.layer_norm(x, [4], w, b)
    return y

# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK: [[CUDA:%[^ ]+]] : str = prim::Constant[value="cuda"]()
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: [[SHAPE:%[^ ]+]] : int[] = prim::ListConstruct(
# CHECK-NEXT: [[B:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%b.1, [[CUDA]], [[R]])
# CHECK-NEXT: [[W:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%w.1, [[CUDA]], [[R]])
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%x.1, [[CUDA]], [[R]])
# CHECK-NEXT: %y.1 : Tensor = aten::layer_norm([[X]], [[SHAPE]], [[W]], [[B]],
# CHECK-NEXT: jitamp::autocast_exit([[G]])
# CHECK-NOT: jitamp::autocast_to_fp16
