# `with autocast(...) as ac` then `with ac:` again: both enters take the same
# object, each gets a fresh guard, and each exit closes its own guard.
# RUN: jitamp dump %s:twice | filecheck %s
import torch


def twice(x, y):
    with torch.autocast("cpu") as ac:
        z = torch.mm(x, y)
    with ac:
        w = torch.mm(z, y)
    return w

# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# CHECK: [[AC:%[^ ]+]] : __torch__.torch.amp.autocast_mode.autocast = prim::CreateObject()
# CHECK-NOT: prim::CreateObject()
# CHECK: [[G1:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R1:%[^ ]+]] : int = jitamp::autocast_enter([[AC]])
# CHECK-NEXT: [[Y1:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%y.1, [[DEV]], [[R1]])
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV]], [[R1]])
# CHECK-NEXT: %z.1 : Tensor = aten::mm([[X]], [[Y1]])
# CHECK-NEXT: jitamp::autocast_exit([[G1]])
# Entering the same object again opens a new region with a token of its own:
# the casts of %y.1 in the two regions stay apart. (Before torch 2.5 eager's
# `as ac` binds None, and a raise of what `with None:` raises comes first.)
# CHECK: [[G2:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R2:%[^ ]+]] : int = jitamp::autocast_enter([[AC]])
# CHECK-NEXT: [[Y:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%y.1, [[DEV]], [[R2]])
# CHECK-NEXT: [[Z:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%z.1, [[DEV]], [[R2]])
# CHECK-NEXT: %w.1 : Tensor = aten::mm([[Z]], [[Y]])
# CHECK-NEXT: jitamp::autocast_exit([[G2]])
# CHECK-NOT: jitamp::autocast_exit([[G1]])
# CHECK-NOT: prim::Enter
