# keep_mms_unbatched (standalone_freeze pipeline, after
# keep_addmm_whole_in_module; KeepMMsUnbatchedInModule in
# passes/keep_mms_unbatched.h): TorchScript's stock executors run BatchMM
# on no-grad code, which replaces a tree of four or more aten::mm summed by
# add with one mm of concatenated inputs (prim::MMTreeReduce: one rounding
# where eager rounds each product and sum, 0.25 off on a 64x64 bfloat16
# result), and eight or more mm of one input with one mm of the others
# concatenated. BatchMM leaves alone a graph that holds an in-place aten op,
# so each method with an aten::mm starts with a branch that never runs
# (`if self._unbatched_mm_guard:`, False) writing in place to a module
# attribute (`self._unbatched_mm_guard_tensor.zero_()`), which no pass
# removes. A method without mm (NoMM) is left as it is. The BEFORE run shows
# the graph the pass takes (stripped, addmm kept whole).
# RUN: jitamp opt %s:Net --passes=rewrite_module,repair_frozen_call_stacks,fold_static_casts,keep_constants_apart,preoptimize_module,static_scope_obstacles,strip_static_scopes,keep_addmm_whole_in_module | filecheck %s --check-prefix BEFORE
# RUN: jitamp opt %s:Net --passes=rewrite_module,repair_frozen_call_stacks,fold_static_casts,keep_constants_apart,preoptimize_module,static_scope_obstacles,strip_static_scopes,keep_addmm_whole_in_module,keep_mms_unbatched | filecheck %s
# RUN: jitamp opt %s:NoMM --passes=rewrite_module,repair_frozen_call_stacks,fold_static_casts,keep_constants_apart,preoptimize_module,static_scope_obstacles,strip_static_scopes,keep_addmm_whole_in_module,keep_mms_unbatched | filecheck %s --check-prefix NOMM
import torch
from torch import Tensor, nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 4, 4))

    def forward(self, x: Tensor) -> Tensor:
        w = self.w
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = torch.mm(x, w[0]) + torch.mm(x * 2, w[1]) + torch.mm(x + 1, w[2]) + torch.mm(x - 1, w[3])
        return y.float()


class NoMM(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = self.fc(x)
        return y.float()

# BEFORE-LABEL: graph(%self
# BEFORE-NEXT: %x.1 : Tensor):
# BEFORE-NOT: _unbatched_mm_guard
# BEFORE-COUNT-4: aten::mm(
# BEFORE-NOT: _unbatched_mm_guard

# CHECK-LABEL: graph(%self
# CHECK-NEXT: %x.1 : Tensor):
# CHECK-NEXT: [[G:%[^ ]+]] : bool = prim::GetAttr[name="_unbatched_mm_guard"](%self)
# CHECK-NEXT: prim::If([[G]])
# CHECK-NEXT: block0():
# CHECK-NEXT: [[T:%[^ ]+]] : Tensor = prim::GetAttr[name="_unbatched_mm_guard_tensor"](%self)
# CHECK-NEXT: aten::zero_([[T]])
# CHECK-NEXT: -> ()
# CHECK-NEXT: block1():
# CHECK-NEXT: -> ()
# CHECK-COUNT-4: aten::mm(
# CHECK-NOT: _unbatched_mm_guard

# NOMM-NOT: _unbatched_mm_guard
# NOMM: aten::linear(
# NOMM-NOT: _unbatched_mm_guard
