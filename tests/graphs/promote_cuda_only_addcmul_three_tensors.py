# promote on CUDA only: addcmul promotes its three tensors together with
# devices "cuda"; the Scalar value is not an operand of the promote.
# RUN: jitamp dump %s:fused | filecheck %s
import torch


def fused(a, b, c):
    with torch.autocast("cpu"):
        y = torch.addcmul(a, b, c, value=0.5)
    return y

# CHECK-LABEL: graph(%a.1 : Tensor,
# CHECK-NOT: "cpu,cuda"
# CHECK: [[CUDA:%[^ ]+]] : str = prim::Constant[value="cuda"]()
# CHECK: [[HALF:%[^ ]+]] : float = prim::Constant[value=0.5]()
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: [[A:%[^ ]+]] : Tensor, [[B:%[^ ]+]] : Tensor, [[C:%[^ ]+]] : Tensor = jitamp::autocast_promote(%a.1, %b.1, %c.1, [[CUDA]], [[R]])
# CHECK-NEXT: %y.1 : Tensor = aten::addcmul([[A]], [[B]], [[C]], [[HALF]])
# CHECK-NEXT: jitamp::autocast_exit([[G]])
# CHECK-NOT: jitamp::autocast_to
