# keep_addmm_whole_in_module (standalone_freeze pipeline, after
# strip_static_scopes; KeepAddmmWholeInModule in passes/keep_addmm_whole.h):
# a standalone model runs on TorchScript's stock executors, whose
# DecomposeOps splits an aten::addmm whose beta and alpha are both the
# constant 1 into mm + add, rounding twice where eager's addmm rounds once
# (0.125 off eager on a 64x64 bfloat16 result, 1 float32 ulp without
# autocast). Each such addmm reads beta instead from a module attribute
# holding that constant, `_unsplit_addmm_beta_<type>` (int for beta=1,
# float for beta=1.0), which no pass folds, so DecomposeOps leaves it
# whole; an addmm with another beta (2), which DecomposeOps does not split,
# keeps its constant. In the bfloat16 scope (GPT-2's Conv1D) and outside it.
# The BEFORE run shows the graph the pass takes (stripped: no jitamp op).
# RUN: jitamp opt %s:Net --passes=rewrite_module,repair_frozen_call_stacks,fold_static_casts,keep_constants_apart,preoptimize_module,static_scope_obstacles,strip_static_scopes | filecheck %s --check-prefix BEFORE
# RUN: jitamp opt %s:Net --passes=rewrite_module,repair_frozen_call_stacks,fold_static_casts,keep_constants_apart,preoptimize_module,static_scope_obstacles,strip_static_scopes,keep_addmm_whole_in_module | filecheck %s
import torch
from torch import Tensor, nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(4, 4))
        self.bias = nn.Parameter(torch.randn(4))

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = torch.addmm(self.bias, x, self.weight)
        z = torch.addmm(self.bias, x, self.weight, beta=1.0)
        w = torch.addmm(self.bias, x, self.weight, beta=2)
        return y.float() + z + w

# BEFORE: [[TWO:%[^ ]+]] : int = prim::Constant[value=2]()
# BEFORE: [[ONEF:%[^ ]+]] : float = prim::Constant[value=1.]()
# BEFORE: [[ONE:%[^ ]+]] : int = prim::Constant[value=1]()
# BEFORE: %y.1 : Tensor = aten::addmm(%self.bias_BFloat16, %{{[^ ]+}}, %self.weight_BFloat16, [[ONE]], [[ONE]])
# BEFORE-NEXT: %z.1 : Tensor = aten::addmm(%self.bias, %x.1, %self.weight, [[ONEF]], [[ONE]])
# BEFORE-NEXT: %w.1 : Tensor = aten::addmm(%self.bias, %x.1, %self.weight, [[TWO]], [[ONE]])
# BEFORE-NOT: _unsplit_addmm_beta_

# CHECK: [[TWO:%[^ ]+]] : int = prim::Constant[value=2]()
# CHECK: [[ONE:%[^ ]+]] : int = prim::Constant[value=1]()
# CHECK: [[BI:%[^ ]+]] : int = prim::GetAttr[name="_unsplit_addmm_beta_int"](%self)
# CHECK-NEXT: %y.1 : Tensor = aten::addmm(%self.bias_BFloat16, %{{[^ ]+}}, %self.weight_BFloat16, [[BI]], [[ONE]])
# CHECK-NEXT: [[BF:%[^ ]+]] : float = prim::GetAttr[name="_unsplit_addmm_beta_float"](%self)
# CHECK-NEXT: %z.1 : Tensor = aten::addmm(%self.bias, %x.1, %self.weight, [[BF]], [[ONE]])
# CHECK-NEXT: %w.1 : Tensor = aten::addmm(%self.bias, %x.1, %self.weight, [[TWO]], [[ONE]])
