# promote on CUDA only for index_put: self and values are promoted together
# ("cuda"); the indices list (integral, Tensor?[] in eager's schema) is not
# an operand of the promote and must not be treated like cat's list.
# RUN: jitamp dump %s:put | filecheck %s
import torch


def put(x, i, v):
    with torch.autocast("cpu"):
        y = torch.index_put(x, [i], v)
    return y

# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK: [[CUDA:%[^ ]+]] : str = prim::Constant[value="cuda"]()
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: [[IDX:%[^ ]+]] : Tensor[] = prim::ListConstruct(%i.1)
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor, [[V:%[^ ]+]] : Tensor = jitamp::autocast_promote(%x.1, %v.1, [[CUDA]], [[R]])
# CHECK-NEXT: %y.1 : Tensor = aten::index_put([[X]], [[IDX]], [[V]],
# CHECK-NEXT: jitamp::autocast_exit([[G]])
