# lower_precision_fp: both inputs of mm get the smart cast to the autocast
# dtype, on CPU and CUDA alike; the scope becomes enter/exit ops. The casts
# come in eager's order, last argument first (the order of eager's autocast
# kernels as GCC builds them, probed at run time: cast_ops.h).
# RUN: jitamp dump %s:mm_in_scope | filecheck %s
import torch


def mm_in_scope(x, y):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        z = torch.mm(x, y)
    return z

# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK: [[DEV:%.*]] : str = prim::Constant[value="cpu,cuda"]()
# CHECK: [[AC:%.*]] : __torch__.torch.amp.autocast_mode.autocast = prim::CreateObject()
# The enter gives the guard and the region token; the casts in the scope take
# that token as their last operand, the exit takes the guard alone.
# CHECK: [[GUARD:%.*]] : __torch__.torch.classes.jitamp.AutocastGuard, [[REGION:%.*]] : int = jitamp::autocast_enter([[AC]])
# CHECK-NEXT: [[Y:%.*]] : Tensor = jitamp::autocast_to_fp16(%y.1, [[DEV]], [[REGION]])
# CHECK-NEXT: [[X:%.*]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV]], [[REGION]])
# CHECK-NEXT: %z.1 : Tensor = aten::mm([[X]], [[Y]])
# CHECK-NEXT: jitamp::autocast_exit([[GUARD]])
# CHECK-NOT: prim::Enter
# CHECK-NOT: prim::Exit
