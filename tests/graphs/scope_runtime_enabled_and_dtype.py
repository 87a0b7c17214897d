# enabled= and dtype= taken from arguments flow into the autocast object's
# __init__ unchanged (no constant folding), and the scope is still lowered.
# RUN: jitamp dump %s:configurable | filecheck %s
import torch


def configurable(x, y, flag: bool, dt: torch.dtype):
    with torch.autocast("cpu", dtype=dt, enabled=flag):
        z = torch.mm(x, y)
    return z

# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK: %flag.1 : bool,
# CHECK-NEXT: %dt.1 : int):
# CHECK: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# CHECK: [[AC:%[^ ]+]] : __torch__.torch.amp.autocast_mode.autocast = prim::CreateObject()
# CHECK-NEXT: prim::CallMethod[name="__init__"]([[AC]], {{%[^ ]+}}, %dt.1, %flag.1,
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter([[AC]])
# CHECK-NEXT: [[Y:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%y.1, [[DEV]], [[R]])
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV]], [[R]])
# CHECK-NEXT: %z.1 : Tensor = aten::mm([[X]], [[Y]])
# CHECK-NEXT: jitamp::autocast_exit([[G]])
# CHECK-NOT: prim::Enter
