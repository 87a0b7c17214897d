# A `List[Tensor]` argument is promoted as it comes in: the list itself is the
# operand of autocast_promote.list, with no ListConstruct in between.
# RUN: jitamp dump %s:concat_all | filecheck %s
from typing import List

import torch


def concat_all(xs: List[torch.Tensor]):
    with torch.autocast("cpu"):
        y = torch.cat(xs)
    return y

# CHECK-LABEL: graph(%xs.1 : Tensor[]):
# CHECK: [[CPU:%[^ ]+]] : str = prim::Constant[value="cpu"]()
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: [[P:%[^ ]+]] : Tensor[] = jitamp::autocast_promote(%xs.1, [[CPU]], [[R]])
# CHECK-NEXT: %y.1 : Tensor = aten::cat([[P]],
# CHECK-NEXT: jitamp::autocast_exit([[G]])
# CHECK-NOT: prim::ListConstruct
