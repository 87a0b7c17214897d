# fp32_set_opt_dtype (softmax on CUDA) with dtype=None: the plain two-argument
# autocast_to_fp32 with devices "cuda"; CPU has no softmax policy.
# RUN: jitamp dump %s:probs | filecheck %s
import torch


def probs(x):
    with torch.autocast("cpu"):
        p = torch.softmax(x, 1)
    return p

# CHECK-LABEL: graph(%x.1 : Tensor):
# CHECK-NOT: "cpu,cuda"
# CHECK: [[CUDA:%[^ ]+]] : str = prim::Constant[value="cuda"]()
# CHECK-NOT: "cpu,cuda"
# CHECK: [[NONE:%[^ ]+]] : NoneType = prim::Constant()
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# The plain overload (self, devices, region): no dtype operand.
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%x.1, [[CUDA]], [[R]]){{$}}
# CHECK-NEXT: %p.1 : Tensor = aten::softmax([[X]], {{%[^ ]+}}, [[NONE]])
# CHECK-NEXT: jitamp::autocast_exit([[G]])
