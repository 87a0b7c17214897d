# The freeze pipeline (FreezeModule, pipeline/pipeline.cpp; docs/frozen.md):
# what jitamp.freeze(model) does after torch.jit.freeze of the rewritten
# model, and torch.jit.freeze of a model jitamp
# rewrote (rewrite_module, repair_frozen_call_stacks, fold_static_casts,
# keep_constants_apart, pool_channels_last, preoptimize_module). Its
# characteristic result: in a constant dtype scope (`torch.autocast("cpu",
# dtype=torch.bfloat16)`) the casts of the frozen conv weights are done
# once, as BFloat16 constants named after them (the float32 weights gone),
# the input's cast stays (its dtype is the caller's), and max_pool2d
# becomes jitamp::max_pool2d (channels-last pooling, eager's bits); in a
# scope without dtype (`torch.autocast("cpu")`, which reads the thread's
# dtype at run time: aten::get_autocast_dtype) the linear's weight casts
# stay; every scope op stays (the frozen model is exact for callers in any
# autocast state).
# RUN: jitamp opt %s:Net --passes=freeze | filecheck %s
import torch
import torch.nn.functional as F
from torch import Tensor, nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.head = nn.Linear(8, 4)

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = F.max_pool2d(torch.relu(self.conv(x)), 2).mean(dim=(2, 3))
        with torch.autocast("cpu"):
            z = self.head(y)
        return z.float()

# CHECK-NOT: %self.conv.weight :
# CHECK: %self.conv.weight_BFloat16 : BFloat16(8, 3, 3, 3, {{.*}} = prim::Constant[value={{.*}}]()
# CHECK-NEXT: %self.conv.bias_BFloat16 : BFloat16(8, {{.*}} = prim::Constant[value={{.*}}]()
# CHECK-NOT: %self.conv.weight :
# CHECK: %self.head.weight : Float(4, 8, {{.*}} = prim::Constant[value={{.*}}]()
# CHECK: [[E:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, {{%[^ ]+}} : int = jitamp::autocast_enter(
# CHECK-NEXT: [[R:%[^ ]+]] : int = jitamp::autocast_caller_region()
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, {{%[^ ]+}}, [[R]])
# CHECK-NEXT: [[C:%[^ ]+]] : Tensor = aten::conv2d([[X]], %self.conv.weight_BFloat16, %self.conv.bias_BFloat16,
# CHECK-NEXT: [[A:%[^ ]+]] : Tensor = aten::relu([[C]])
# CHECK-NEXT: [[P:%[^ ]+]] : Tensor = jitamp::max_pool2d([[A]],
# CHECK-NEXT: %y.1 : Tensor = aten::mean([[P]],
# CHECK-NEXT: jitamp::autocast_exit([[E]])
# CHECK: aten::get_autocast_dtype(
# CHECK: jitamp::autocast_enter(
# CHECK-NEXT: [[R2:%[^ ]+]] : int = jitamp::autocast_caller_region()
# CHECK-NEXT: [[B:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%self.head.bias, {{%[^ ]+}}, [[R2]])
# CHECK-NEXT: [[W:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%self.head.weight, {{%[^ ]+}}, [[R2]])
# CHECK-NEXT: [[Y:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%y.1, {{%[^ ]+}}, [[R2]])
# CHECK-NEXT: %z.1 : Tensor = aten::linear([[Y]], [[W]], [[B]])
# CHECK-NEXT: jitamp::autocast_exit(
# CHECK-NOT: aten::max_pool2d
