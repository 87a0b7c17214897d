# lower_precision_fp on CUDA only for Tensor[] ops (einsum, linalg_multi_dot,
# chain_matmul): the .list overload of autocast_to_fp16 on the whole list, "cuda".
# RUN: jitamp dump %s:products | filecheck %s
from typing import List

import torch


def products(x, y, z, ms: List[torch.Tensor]):
    with torch.autocast("cpu"):
        e = torch.einsum("ij,jk->ik", x, y)
        m = torch.linalg.multi_dot(ms)
        c = torch.chain_matmul(x, y, z)
    return e, m, c

# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK-NOT: "cpu,cuda"
# CHECK: [[CUDA:%[^ ]+]] : str = prim::Constant[value="cuda"]()
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: [[L1:%[^ ]+]] : Tensor[] = prim::ListConstruct(%x.1, %y.1)
# CHECK-NEXT: [[C1:%[^ ]+]] : Tensor[] = jitamp::autocast_to_fp16([[L1]], [[CUDA]], [[R]])
# CHECK-NEXT: %e.1 : Tensor = aten::einsum({{%[^ ]+}}, [[C1]],
# CHECK-NEXT: [[C2:%[^ ]+]] : Tensor[] = jitamp::autocast_to_fp16(%ms.1, [[CUDA]], [[R]])
# CHECK-NEXT: %m.1 : Tensor = aten::linalg_multi_dot([[C2]])
# CHECK-NEXT: [[L3:%[^ ]+]] : Tensor[] = prim::ListConstruct(%x.1, %y.1, %z.1)
# CHECK-NEXT: [[C3:%[^ ]+]] : Tensor[] = jitamp::autocast_to_fp16([[L3]], [[CUDA]], [[R]])
# CHECK-NEXT: %c.1 : Tensor = aten::chain_matmul([[C3]])
# CHECK-NEXT: jitamp::autocast_exit([[G]])
