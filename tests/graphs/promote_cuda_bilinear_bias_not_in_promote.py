# promote on CUDA for bilinear: input1, input2 and weight decide the dtype;
# the bias (a `Tensor?` parameter) is not a promote operand even when the
# argument is a plain Tensor; the dispatcher casts it as eager does.
# RUN: jitamp dump %s:bil | filecheck %s
import torch
import torch.nn.functional as F


def bil(a, b, w, bias):
    with torch.autocast("cpu"):
        y = F.bilinear(a, b, w, bias)
    return y

# CHECK-LABEL: graph(%a.1 : Tensor,
# CHECK: [[CUDA:%[^ ]+]] : str = prim::Constant[value="cuda"]()
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: [[A:%[^ ]+]] : Tensor, [[B:%[^ ]+]] : Tensor, [[W:%[^ ]+]] : Tensor = jitamp::autocast_promote(%a.1, %b.1, %w.1, [[CUDA]], [[R]])
# CHECK-NEXT: %y.1 : Tensor = aten::bilinear([[A]], [[B]], [[W]], %bias.1)
# CHECK-NEXT: jitamp::autocast_exit([[G]])
