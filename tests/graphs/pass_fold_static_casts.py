# fold_static_casts (freeze and standalone_freeze pipelines, after
# repair_frozen_call_stacks; passes/fold_static_casts.h): torch.jit.freeze
# makes the weights constants, but jitamp's casts stop torch's constant
# folding (their region token is never a constant: a cast's result depends
# on the autocast state at run time). Where the graph itself fixes the
# state, the cast of a frozen weight is done once, now, with eager's cast
# kernel: a constant dtype scope (`torch.autocast("cpu",
# dtype=torch.bfloat16)`) gets new BFloat16 constants named after the
# weights (self.static.weight_BFloat16), and the float32 weights they
# replace are dropped; in a statically disabled scope (enabled=False) the
# weight casts return their input and are removed. A scope without a dtype
# (`torch.autocast("cpu")`) reads the thread's dtype at run time
# (aten::get_autocast_dtype), so its weight casts stay, and so do casts of
# activations everywhere (their dtype is the caller's). The BEFORE run shows
# the frozen graph the pass takes (after repair_frozen_call_stacks, which
# changes no IR text).
# RUN: jitamp opt %s:Net --passes=repair_frozen_call_stacks | filecheck %s --check-prefix BEFORE
# RUN: jitamp opt %s:Net --passes=repair_frozen_call_stacks,fold_static_casts | filecheck %s
import torch
from torch import Tensor, nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.static = nn.Linear(4, 4)
        self.thread = nn.Linear(4, 4)
        self.off = nn.Linear(4, 4)

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = self.static(x)
            with torch.autocast("cpu", enabled=False):
                z = self.off(y.float())
        with torch.autocast("cpu"):
            y = self.thread(y)
        return y.float() + z

# BEFORE-NOT: _BFloat16
# BEFORE: %self.static.weight : Float(4, 4,
# BEFORE: jitamp::autocast_to_fp16(%self.static.bias,
# BEFORE-NEXT: jitamp::autocast_to_fp16(%self.static.weight,
# BEFORE: jitamp::autocast_to_fp16(%self.off.bias,
# BEFORE-NEXT: jitamp::autocast_to_fp16(%self.off.weight,
# BEFORE: jitamp::autocast_to_fp16(%self.thread.bias,
# BEFORE-NEXT: jitamp::autocast_to_fp16(%self.thread.weight,

# CHECK: %self.static.weight_BFloat16 : BFloat16(4, 4, {{.*}} = prim::Constant[value={{.*}}]()
# CHECK-NEXT: %self.static.bias_BFloat16 : BFloat16(4, {{.*}} = prim::Constant[value={{.*}}]()
# CHECK-NOT: %self.static.weight :
# CHECK-NOT: %self.static.bias :
# CHECK: jitamp::autocast_enter(
# CHECK-NEXT: [[R:%[^ ]+]] : int = jitamp::autocast_caller_region()
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, {{%[^ ]+}}, [[R]])
# CHECK-NEXT: %y.1 : Tensor = aten::linear([[X]], %self.static.weight_BFloat16, %self.static.bias_BFloat16)
# CHECK: jitamp::autocast_caller_region()
# CHECK-NEXT: [[Y:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(
# CHECK-NEXT: %z.1 : Tensor = aten::linear([[Y]], %self.off.weight, %self.off.bias)
# CHECK: aten::get_autocast_dtype(
# CHECK: jitamp::autocast_to_fp16(%self.thread.bias,
# CHECK-NEXT: jitamp::autocast_to_fp16(%self.thread.weight,
# CHECK-NEXT: jitamp::autocast_to_fp16(%y.1,
# CHECK-NEXT: aten::linear(
