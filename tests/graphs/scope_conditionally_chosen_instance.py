# An autocast object chosen by prim::If (one per branch, each with its own
# recorded cache flag) is entered through the If's output.
# RUN: jitamp dump %s:chosen | filecheck %s
import torch


def chosen(x, y, flag: bool):
    if flag:
        ac = torch.autocast("cpu")
    else:
        ac = torch.autocast("cpu", enabled=False)
    with ac:
        z = torch.mm(x, y)
    return z

# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# CHECK: %ac : __torch__.torch.amp.autocast_mode.autocast = prim::If(%flag.1)
# CHECK: [[A1:%[^ ]+]] : __torch__.torch.amp.autocast_mode.autocast = prim::CreateObject()
# CHECK-NEXT: prim::CallMethod[name="__init__"]([[A1]],
# CHECK-NEXT: [[F1:%[^ ]+]] : bool = jitamp::autocast_cache_enabled(
# CHECK-NEXT: prim::SetAttr[name="_jitamp_cache_enabled"]([[A1]], [[F1]])
# CHECK-NEXT: -> ([[A1]])
# CHECK: [[A2:%[^ ]+]] : __torch__.torch.amp.autocast_mode.autocast = prim::CreateObject()
# CHECK-NEXT: prim::CallMethod[name="__init__"]([[A2]],
# CHECK-NEXT: [[F2:%[^ ]+]] : bool = jitamp::autocast_cache_enabled(
# CHECK-NEXT: prim::SetAttr[name="_jitamp_cache_enabled"]([[A2]], [[F2]])
# CHECK-NEXT: -> ([[A2]])
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(%ac)
# CHECK-NEXT: [[Y:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%y.1, [[DEV]], [[R]])
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV]], [[R]])
# CHECK-NEXT: %z.1 : Tensor = aten::mm([[X]], [[Y]])
# CHECK-NEXT: jitamp::autocast_exit([[G]])
