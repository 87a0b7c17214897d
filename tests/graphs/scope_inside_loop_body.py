# A scope inside a for loop: object creation, enter, casts and exit all sit in
# the loop body, so every iteration opens and closes its own scope.
# RUN: jitamp dump %s:per_iteration | filecheck %s
import torch


def per_iteration(x, y, n: int):
    for i in range(n):
        with torch.autocast("cpu"):
            x = torch.mm(x, y)
    return x

# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK-NOT: jitamp::autocast_enter
# CHECK: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# CHECK: prim::Loop(%n.1,
# (Its result returned, the loop also carries KeepLoopsOutOfLine's pair of
# bools: see loop_kept_out_of_line.py.)
# CHECK-NEXT: block0(%i : int, [[X:%[^ ]+]] : Tensor, {{.*}}):
# CHECK-NEXT: [[AC:%[^ ]+]] : __torch__.torch.amp.autocast_mode.autocast = prim::CreateObject()
# CHECK-NEXT: prim::CallMethod[name="__init__"]([[AC]],
# CHECK-NEXT: jitamp::autocast_cache_enabled(
# CHECK-NEXT: prim::SetAttr[name="_jitamp_cache_enabled"]([[AC]],
# The enter in the body makes a fresh token each iteration; the casts there
# take it.
# CHECK-NEXT: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter([[AC]])
# CHECK-NEXT: [[YC:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%y.1, [[DEV]], [[R]])
# CHECK-NEXT: [[XC:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16([[X]], [[DEV]], [[R]])
# CHECK-NEXT: [[RES:%[^ ]+]] : Tensor = aten::mm([[XC]], [[YC]])
# CHECK-NEXT: jitamp::autocast_exit([[G]])
# CHECK-NEXT: -> ({{%[^ ]+}}, [[RES]], {{.*}})
# CHECK-NEXT: return (
