# The standalone_freeze pipeline (FreezeStandalone, pipeline/pipeline.cpp;
# docs/frozen.md): jitamp.freeze(model, standalone=True), a frozen model
# without any jitamp op, which loads in stock LibTorch or torch.jit.load
# and is exact for callers whose autocast is off (rewrite_module,
# repair_frozen_call_stacks, fold_static_casts, keep_constants_apart,
# preoptimize_module, static_scope_obstacles, strip_static_scopes,
# keep_addmm_whole_in_module, keep_mms_unbatched, preoptimize_module). Its
# characteristic result, for a model whose only scope is static
# (`torch.autocast("cpu", dtype=torch.bfloat16)`): no jitamp op, scope
# op or autocast object is left; the frozen weights are BFloat16 constants;
# the input's cast is eager's `to(bfloat16)` behind a test of its dtype,
# device and kind (prim::If); the stock executors are kept from splitting
# the addmm (beta read from `_unsplit_addmm_beta_int`) and from batching
# the mm ops (the never-taken `_unbatched_mm_guard` write first). In the
# Pooled model max_pool2d stays ATen's (jitamp::max_pool2d is a jitamp op,
# so the pipeline does not pool channels-last). A model with a scope that is not
# static is refused (ValueError; `jitamp opt` exits 2), which a RUN line
# cannot show.
# RUN: jitamp opt %s:Net --passes=standalone_freeze | filecheck %s
# RUN: jitamp opt %s:Pooled --passes=standalone_freeze | filecheck %s --check-prefix POOLED
import torch
import torch.nn.functional as F
from torch import Tensor, nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(4, 4))
        self.bias = nn.Parameter(torch.randn(4))

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = torch.addmm(self.bias, x, self.weight)
            z = torch.mm(y, self.weight)
        return torch.relu(z.float())


class Pooled(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return F.max_pool2d(torch.relu(self.conv(x)), 2)

# CHECK-NOT: jitamp::
# CHECK-NOT: prim::CreateObject
# CHECK-LABEL: graph(%self
# CHECK-NEXT: %x.1 : Tensor):
# CHECK-NEXT: [[G:%[^ ]+]] : bool = prim::GetAttr[name="_unbatched_mm_guard"](%self)
# CHECK-NEXT: prim::If([[G]])
# CHECK: %self.bias_BFloat16 : BFloat16(4, {{.*}} = prim::Constant[value={{.*}}]()
# CHECK-NEXT: %self.weight_BFloat16 : BFloat16(4, 4, {{.*}} = prim::Constant[value={{.*}}]()
# CHECK: [[DT:%[^ ]+]] : int = prim::dtype(%x.1)
# CHECK: aten::to(%x.1, [[BF16:%[^ ]+]],
# CHECK: [[BETA:%[^ ]+]] : int = prim::GetAttr[name="_unsplit_addmm_beta_int"](%self)
# CHECK-NEXT: %y.1 : Tensor = aten::addmm(%self.bias_BFloat16, %{{[^ ]+}}, %self.weight_BFloat16, [[BETA]],
# CHECK: %z.1 : Tensor = aten::mm(%{{[^ ]+}}, %self.weight_BFloat16)
# CHECK-NEXT: [[F:%[^ ]+]] : Tensor = aten::to(%z.1,
# CHECK-NEXT: aten::relu([[F]])
# CHECK-NOT: jitamp::

# POOLED-NOT: jitamp::
# POOLED: aten::conv2d(%{{[^ ]+}}, %self.conv.weight_BFloat16, %self.conv.bias_BFloat16,
# POOLED-NEXT: [[A:%[^ ]+]] : Tensor = aten::relu(
# POOLED-NEXT: aten::max_pool2d([[A]],
# POOLED-NOT: jitamp::
