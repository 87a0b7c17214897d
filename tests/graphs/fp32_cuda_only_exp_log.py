# fp32 on CUDA only: exp and log cast their input to float32 with devices
# "cuda" (CPU eager keeps them in bfloat16), one cast per call.
# RUN: jitamp dump %s:exp_log | filecheck %s
import torch


def exp_log(x):
    with torch.autocast("cpu"):
        e = torch.exp(x)
        l = torch.log(x)
    return e + l

# CHECK-LABEL: graph(%x.1 : Tensor):
# CHECK-NOT: "cpu,cuda"
# CHECK: [[CUDA:%[^ ]+]] : str = prim::Constant[value="cuda"]()
# CHECK-NOT: "cpu,cuda"
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: [[X1:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%x.1, [[CUDA]], [[R]])
# CHECK-NEXT: %e.1 : Tensor = aten::exp([[X1]])
# CHECK-NEXT: [[X2:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%x.1, [[CUDA]], [[R]])
# CHECK-NEXT: %l.1 : Tensor = aten::log([[X2]])
# CHECK-NEXT: jitamp::autocast_exit([[G]])
# The add after the scope is on no list.
# CHECK-NEXT: aten::add(%e.1, %l.1,
