# autocast(enabled=False) is lowered like any scope: it must switch an outer
# (caller's) autocast off as eager does; the casts stay, deciding at run time.
# RUN: jitamp dump %s:off | filecheck %s
import torch


def off(x, y):
    with torch.autocast("cpu", enabled=False):
        z = torch.mm(x, y)
    return z

# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# CHECK: [[FALSE:%[^ ]+]] : bool = prim::Constant[value=0]()
# CHECK: [[AC:%[^ ]+]] : __torch__.torch.amp.autocast_mode.autocast = prim::CreateObject()
# CHECK-NEXT: prim::CallMethod[name="__init__"]([[AC]], {{%[^ ]+}}, {{%[^ ]+}}, [[FALSE]],
# A disabled scope is a region of its own too: its casts take its token.
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter([[AC]])
# CHECK-NEXT: [[Y:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%y.1, [[DEV]], [[R]])
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV]], [[R]])
# CHECK-NEXT: %z.1 : Tensor = aten::mm([[X]], [[Y]])
# CHECK-NEXT: jitamp::autocast_exit([[G]])
# CHECK-NOT: prim::Enter
# CHECK-NOT: prim::Exit
