# pool_channels_last (freeze pipeline only, after keep_constants_apart;
# passes/pool_channels_last.h): ATen's CPU max_pool2d kernel for NCHW
# tensors goes element by element, its channels-last kernel is vectorized
# over channels, and both return the same element of each window. In a
# frozen model jitamp rewrote, each aten::max_pool2d becomes
# jitamp::max_pool2d (same arguments), which pools an NCHW-contiguous CPU
# input in channels-last layout and returns eager's bits and layout
# (docs/frozen.md, "Max-pooling in channels-last layout"). Only where a
# method already needs jitamp's ops: Plain, whose frozen graph holds none
# (max_pool2d has no cast policy, and there is no scope), keeps ATen's op
# and so still loads without jitamp. The BEFORE run shows the graph the pass
# takes (folded: the conv reads BFloat16 constants).
# RUN: jitamp opt %s:Net --passes=repair_frozen_call_stacks,fold_static_casts,keep_constants_apart | filecheck %s --check-prefix BEFORE
# RUN: jitamp opt %s:Net --passes=repair_frozen_call_stacks,fold_static_casts,keep_constants_apart,pool_channels_last | filecheck %s
# RUN: jitamp opt %s:Plain --passes=repair_frozen_call_stacks,fold_static_casts,keep_constants_apart,pool_channels_last | filecheck %s --check-prefix PLAIN
import torch
import torch.nn.functional as F
from torch import Tensor, nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return F.max_pool2d(torch.relu(self.conv(x)), 2)


class Plain(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        return F.max_pool2d(torch.relu(x), 2)

# BEFORE: aten::conv2d(%{{[^ ]+}}, %self.conv.weight_BFloat16, %self.conv.bias_BFloat16,
# BEFORE-NEXT: [[R:%[^ ]+]] : Tensor = aten::relu(
# BEFORE-NEXT: aten::max_pool2d([[R]],
# BEFORE-NOT: jitamp::max_pool2d

# CHECK: aten::conv2d(%{{[^ ]+}}, %self.conv.weight_BFloat16, %self.conv.bias_BFloat16,
# CHECK-NEXT: [[R:%[^ ]+]] : Tensor = aten::relu(
# CHECK-NEXT: [[P:%[^ ]+]] : Tensor = jitamp::max_pool2d([[R]], [[K:%[^ ]+]], [[S:%[^ ]+]], [[PAD:%[^ ]+]], [[D:%[^ ]+]], [[C:%[^ ]+]])
# CHECK-NEXT: jitamp::autocast_exit(
# CHECK-NEXT: return ([[P]])
# CHECK-NOT: aten::max_pool2d

# PLAIN-NOT: jitamp::
# PLAIN: aten::max_pool2d(
# PLAIN-NOT: jitamp::
