# --diff is a unified diff, before -> after: prim::Enter/prim::Exit lines are
# removed (-) and the jitamp enter, casts and exit come in as + lines. Values
# keep their names, so the nodes the rewrite leaves alone are context lines
# even after an inserted constant.
# RUN: jitamp dump %s:scoped --diff | filecheck %s
import torch


def scoped(x, y):
    with torch.autocast("cpu"):
        z = torch.mm(x, y)
    return z

# CHECK: --- scoped (before)
# CHECK-NEXT: +++ scoped (after jitamp)
# CHECK: +  [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# CHECK-NEXT: {{^}}   [[T:%[^ ]+]] : bool = prim::Constant[value=1]()
# CHECK: {{^}}   {{%[^ ]+}} : NoneType = prim::CallMethod[name="__init__"]
# CHECK-NEXT: -  {{%[^ ]+}} : __torch__.torch.amp.autocast_mode.autocast = prim::Enter(
# CHECK-NEXT: -  %z.1 : Tensor = aten::mm(%x.1, %y.1)
# CHECK-NEXT: -  {{%[^ ]+}} : Tensor = prim::Exit(
# CHECK-NEXT: +  {{%[^ ]+}} : bool = jitamp::autocast_cache_enabled(
# CHECK-NEXT: +   = prim::SetAttr[name="_jitamp_cache_enabled"](
# CHECK-NEXT: +  [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: +  [[Y:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%y.1, [[DEV]], [[R]])
# CHECK-NEXT: +  [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV]], [[R]])
# CHECK-NEXT: +  %z.1 : Tensor = aten::mm([[X]], [[Y]])
# CHECK-NEXT: +   = jitamp::autocast_exit([[G]])
# CHECK-NOT: {{^}}+{{.*}}prim::Enter
# CHECK-NOT: {{^}}+{{.*}}prim::Exit
