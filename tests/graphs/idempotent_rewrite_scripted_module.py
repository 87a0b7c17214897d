# Rewriting a scripted module again (at import, then by the dump) adds no
# second cache-flag store after __init__ and no second cast before linear.
# RUN: jitamp dump %s:scripted_module | filecheck %s
import torch
import torch.nn as nn

import jitamp


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(4, 4))

    def forward(self, x):
        with torch.autocast("cpu"):
            y = torch.nn.functional.linear(x, self.w)
        return y


with jitamp.enable():
    scripted_module = torch.jit.script(Block())
jitamp.rewrite(scripted_module)

# CHECK-LABEL: graph(%self : {{.*}}Block,
# CHECK: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# CHECK-NOT: value="cpu,cuda"
# CHECK: [[AC:%[^ ]+]] : __torch__.torch.amp.autocast_mode.autocast = prim::CreateObject()
# CHECK-NEXT: prim::CallMethod[name="__init__"]([[AC]],
# CHECK-NEXT: [[F:%[^ ]+]] : bool = jitamp::autocast_cache_enabled(
# CHECK-NEXT: prim::SetAttr[name="_jitamp_cache_enabled"]([[AC]], [[F]])
# CHECK-NEXT: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter([[AC]])
# CHECK-NEXT: [[W:%[^ ]+]] : Tensor = prim::GetAttr[name="w"](%self)
# CHECK-NEXT: [[WC:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16([[W]], [[DEV]], [[R]])
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV]], [[R]])
# CHECK-NEXT: %y.1 : Tensor = aten::linear([[X]], [[WC]],
# CHECK-NEXT: jitamp::autocast_exit([[G]])
# CHECK-NOT: jitamp::autocast_cache_enabled
# CHECK-NOT: jitamp::autocast_to_fp16
