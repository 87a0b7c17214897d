# A `Tensor?` argument reaching a listed op gets the .optional overload of the
# cast, whose result stays `Tensor?` (it is None at run time when b is).
# RUN: jitamp dump %s:linear_maybe_bias | filecheck %s
from typing import Optional

import torch
import torch.nn.functional as F


def linear_maybe_bias(x, w, b: Optional[torch.Tensor]):
    with torch.autocast("cpu"):
        y = F.linear(x, w, b)
    return y

# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK: %b.1 : Tensor?):
# CHECK: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: [[B:%[^ ]+]] : Tensor? = jitamp::autocast_to_fp16(%b.1, [[DEV]], [[R]])
# CHECK-NEXT: [[W:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%w.1, [[DEV]], [[R]])
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV]], [[R]])
# CHECK-NEXT: %y.1 : Tensor = aten::linear([[X]], [[W]], [[B]])
# CHECK-NEXT: jitamp::autocast_exit([[G]])
