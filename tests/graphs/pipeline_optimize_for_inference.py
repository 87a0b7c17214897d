# The optimize_for_inference pipeline (OptimizeForInference,
# pipeline/pipeline.cpp; docs/frozen.md): torch.jit.optimize_for_inference
# of a model jitamp rewrote, the freeze pipeline with torch's own passes of
# optimize_for_inference between the rewrite and the fold (rewrite_module,
# torch_optimize_for_inference, repair_frozen_call_stacks,
# fold_static_casts, keep_constants_apart, pool_channels_last,
# preoptimize_module). Its characteristic result: torch's passes saw every
# weight behind its cast, so they changed no op of jitamp's graph, where
# they would turn the linear of the `enabled=False` scope into a matmul of
# the transposed weight (torch.jit.optimize_for_inference of the model
# scripted without jitamp does); the fold after them then did the casts of
# frozen weights: in the bfloat16 scope the conv's weight and bias are
# BFloat16 constants, in the disabled scope the cast of the linear's
# weight, which returns it there, is gone, and the head's casts, whose
# state is the caller's, stay.
# RUN: jitamp opt %s:Net --passes=optimize_for_inference | filecheck %s
import torch
from torch import Tensor, nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.plain = nn.Linear(8, 8)
        self.head = nn.Linear(8, 4)

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = torch.relu(self.conv(x)).mean(dim=(2, 3))
        with torch.autocast("cpu", enabled=False):
            z = self.plain(y.float())
        return self.head(z)

# CHECK-NOT: %self.conv.weight :
# CHECK: %self.conv.weight_BFloat16 : BFloat16(8, 3, 3, 3, {{.*}} = prim::Constant[value={{.*}}]()
# CHECK-NEXT: %self.conv.bias_BFloat16 : BFloat16(8, {{.*}} = prim::Constant[value={{.*}}]()
# CHECK: %self.plain.weight : Float(8, 8, strides=[8, 1], {{.*}} = prim::Constant[value={{.*}}]()
# CHECK: jitamp::autocast_enter(
# CHECK: aten::conv2d({{%[^ ]+}}, %self.conv.weight_BFloat16, %self.conv.bias_BFloat16,
# CHECK: jitamp::autocast_exit(
# CHECK: jitamp::autocast_enter(
# CHECK: %z.1 : Tensor = aten::linear({{%[^ ]+}}, %self.plain.weight, %self.plain.bias)
# CHECK-NEXT: jitamp::autocast_exit(
# CHECK: [[R:%[^ ]+]] : int = jitamp::autocast_caller_region()
# CHECK-NEXT: [[B:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%self.head.bias, {{%[^ ]+}}, [[R]])
# CHECK-NEXT: [[W:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%self.head.weight, {{%[^ ]+}}, [[R]])
# CHECK-NEXT: [[Z:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%z.1, {{%[^ ]+}}, [[R]])
# CHECK-NEXT: aten::linear([[Z]], [[W]], [[B]])
# CHECK-NOT: aten::matmul
# CHECK-NOT: mkldnn
