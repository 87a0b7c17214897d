# nn.Conv2d(bias=True): the bias attribute is `Tensor?`, so inlined conv2d gets
# the .optional cast on it (built-in JIT autocast never cast it).
# RUN: jitamp dump %s:ConvBlock --inline | filecheck %s
import torch
import torch.nn as nn


class ConvBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, bias=True)

    def forward(self, img):
        with torch.autocast("cpu"):
            y = self.conv(img)
        return y

# Conv2d.forward is rewritten on its own before --inline: its casts keep the
# token of its own caller-region node, which comes in with its body.
# CHECK-LABEL: graph(%self : {{.*}}ConvBlock,
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# CHECK: [[WT:%[^ ]+]] : Tensor = prim::GetAttr[name="weight"]
# CHECK-NEXT: [[BS:%[^ ]+]] : Tensor? = prim::GetAttr[name="bias"]
# CHECK-NEXT: [[CR:%[^ ]+]] : int = jitamp::autocast_caller_region()
# CHECK: [[B:%[^ ]+]] : Tensor? = jitamp::autocast_to_fp16([[BS]], [[DEV]], [[CR]])
# CHECK-NEXT: [[W:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16([[WT]], [[DEV]], [[CR]])
# CHECK-NEXT: [[I:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%img.1, [[DEV]], [[CR]])
# CHECK-NEXT: %y.1 : Tensor = aten::conv2d([[I]], [[W]], [[B]],
# CHECK-NEXT: jitamp::autocast_exit([[G]])
