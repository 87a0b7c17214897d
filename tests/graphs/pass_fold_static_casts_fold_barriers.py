# fold_static_casts on ops the autocast state may change (passes/
# fold_static_casts.h; the barriers: ir/fold_barriers.h). The walk that
# folds the casts of frozen weights also settles the fold barriers that
# InsertSmartCasts put on ops no cast precedes, and a cast it does hands
# its constant to the op after it:
# - `square`: in the bfloat16 scope the weight's cast is done, so the mm
#   reads two constants and runs in one state, the scope's: done now, in
#   the same walk; constant propagation then folds its `.float()`;
# - `same`: a reflect pad of a float32 weight outside any scope runs in the
#   caller's state, but CPU's fp32 policy gives the same bits in every
#   state (off, bfloat16, float16): done now, its barrier gone;
# - `depends`: the same pad of the weight in bfloat16 gives bfloat16 with
#   autocast off and float32 with it on: it keeps its barrier and runs at
#   every call, as in eager.
# RUN: jitamp opt %s:Net --passes=repair_frozen_call_stacks | filecheck %s --check-prefix BEFORE
# RUN: jitamp opt %s:Net --passes=repair_frozen_call_stacks,fold_static_casts | filecheck %s
import torch
import torch.nn.functional as F
from torch import Tensor, nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 4))

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            square = torch.mm(self.w, self.w)
        same = F.pad(self.w, (1, 1), mode="reflect")
        depends = F.pad(self.w.to(torch.bfloat16), (1, 1), mode="reflect")
        return x + square.float() + same[:, 1:5] + depends[:, 1:5].float()

# BEFORE: [[W16:%[^ ]+]] : BFloat16(4, 4, {{.*}} = prim::Constant
# BEFORE: %self.w : Float(4, 4,
# BEFORE: [[C:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%self.w,
# BEFORE-NEXT: %square.1 : Tensor = aten::mm([[C]], [[C]])
# BEFORE: [[R1:%[^ ]+]] : int = jitamp::autocast_caller_region()
# BEFORE-NEXT: [[B1:%[^ ]+]] : Tensor = jitamp::autocast_dependent(%self.w, [[R1]])
# BEFORE-NEXT: %same.1 : Tensor = aten::pad([[B1]],
# BEFORE-NEXT: [[R2:%[^ ]+]] : int = jitamp::autocast_caller_region()
# BEFORE-NEXT: [[B2:%[^ ]+]] : Tensor = jitamp::autocast_dependent([[W16]], [[R2]])
# BEFORE-NEXT: %depends.1 : Tensor = aten::pad([[B2]],

# CHECK: [[W16:%[^ ]+]] : BFloat16(4, 4, {{.*}} = prim::Constant
# CHECK-NOT: %self.w :
# CHECK-NOT: aten::mm
# CHECK-NOT: %same.1
# CHECK: [[R:%[^ ]+]] : int = jitamp::autocast_caller_region()
# CHECK-NEXT: [[B:%[^ ]+]] : Tensor = jitamp::autocast_dependent([[W16]], [[R]])
# CHECK-NEXT: %depends.1 : Tensor = aten::pad([[B]],
# CHECK-NEXT: [[SQUARE:%[^ ]+]] : Float(4, 4, strides=[4, 1]{{.*}} = prim::Constant
# CHECK-NEXT: aten::add(%x.1, [[SQUARE]],
# CHECK-NEXT: [[SAME:%[^ ]+]] : Float(4, 4, strides=[6, 1]{{.*}} = prim::Constant
# CHECK-NEXT: aten::add({{%[^ ]+}}, [[SAME]],
# CHECK-NOT: jitamp::autocast_dependent
