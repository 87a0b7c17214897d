# keep_constants_apart (freeze and standalone_freeze pipelines, after
# fold_static_casts; passes/keep_constants_apart.h): loading a saved frozen
# model compiles each method again, and its constant pooling merges tensor
# constants of equal values, dtype, device and sizes, whose types no longer
# tell their strides apart at load. Here fold_static_casts computes (its
# fold barrier settled) a view of w's values laid out otherwise (a slice of
# a reflect pad: strides [6, 1]) beside the constant w itself, which a
# linear reads; merged at load, the linear read the view, 1 ulp off eager
# (fuzz finding 21, docs/frozen.md). The pass reads such a constant from a
# module attribute, `_pooled_apart_constant_<n>`, which serialization saves
# with its layout and no pass pools; w, laid out as the first of its values,
# stays a constant. The BEFORE run shows the graph the pass takes (folded).
# RUN: jitamp opt %s:Net --passes=repair_frozen_call_stacks,fold_static_casts | filecheck %s --check-prefix BEFORE
# RUN: jitamp opt %s:Net --passes=repair_frozen_call_stacks,fold_static_casts,keep_constants_apart | filecheck %s
from typing import List

import torch
import torch.nn.functional as F
from torch import Tensor, nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.w = nn.Parameter(torch.randn(4, 4))

    def forward(self, x: Tensor) -> List[Tensor]:
        out: List[Tensor] = []
        out.append(F.pad(self.w.unsqueeze(0), [1, 1], mode="reflect").squeeze(0)[:, 1:5])
        out.append(self.lin(self.w))
        out.append(self.lin(x))
        return out

# BEFORE: %self.w : Float(4, 4, strides=[4, 1], {{.*}} = prim::Constant[value={{.*}}]()
# BEFORE: [[V:%[^ ]+]] : Float(4, 4, strides=[6, 1], {{.*}} = prim::Constant[value={{.*}}]()
# BEFORE-NEXT: aten::append(%out.1, [[V]])
# BEFORE-NOT: _pooled_apart_constant_

# CHECK: %self.w : Float(4, 4, strides=[4, 1], {{.*}} = prim::Constant[value={{.*}}]()
# CHECK-NOT: strides=[6, 1], {{.*}} = prim::Constant
# CHECK: %_pooled_apart_constant_0 : Float(4, 4, strides=[6, 1], {{.*}} = prim::GetAttr[name="_pooled_apart_constant_0"](%self)
# CHECK-NEXT: aten::append(%out.1, %_pooled_apart_constant_0)
# CHECK-NOT: strides=[6, 1], {{.*}} = prim::Constant
# CHECK: jitamp::autocast_to_fp16(%self.w,
# CHECK-NOT: _pooled_apart_constant_
