# --before shows the graph as scripted without jitamp: the scope is
# prim::Enter/prim::Exit and no jitamp op (cast, cache flag, guard) is there.
# RUN: jitamp dump %s:scoped --before | filecheck %s
import torch


def scoped(x, y):
    with torch.autocast("cpu"):
        z = torch.mm(x, y)
    return z

# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK-NOT: jitamp::
# CHECK-NOT: _jitamp_cache_enabled
# CHECK: [[AC:%[^ ]+]] : __torch__.torch.amp.autocast_mode.autocast = prim::CreateObject()
# CHECK-NEXT: prim::CallMethod[name="__init__"]([[AC]],
# CHECK-NEXT: {{%[^ ]+}} : __torch__.torch.amp.autocast_mode.autocast = prim::Enter([[AC]])
# CHECK-NEXT: %z.1 : Tensor = aten::mm(%x.1, %y.1)
# CHECK-NEXT: {{%[^ ]+}} : Tensor = prim::Exit([[AC]])
# CHECK-NEXT: return (%z.1)
# CHECK-NOT: jitamp::
