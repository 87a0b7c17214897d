# fp32_append_dtype (aten::norm.Scalar on CUDA): x.norm(2) casts only the
# input to float32 with devices "cuda"; the Scalar p stays, no dtype operand.
# RUN: jitamp dump %s:magnitude | filecheck %s
import torch


def magnitude(x):
    with torch.autocast("cpu"):
        n = x.norm(2)
    return n

# CHECK-LABEL: graph(%x.1 : Tensor):
# CHECK-NOT: "cpu,cuda"
# CHECK: [[CUDA:%[^ ]+]] : str = prim::Constant[value="cuda"]()
# CHECK: [[P:%[^ ]+]] : int = prim::Constant[value=2]()
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%x.1, [[CUDA]], [[R]]){{$}}
# CHECK-NEXT: %n.1 : Tensor = aten::norm([[X]], [[P]]){{$}}
# CHECK-NEXT: jitamp::autocast_exit([[G]]){{$}}
