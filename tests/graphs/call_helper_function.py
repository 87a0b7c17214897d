# A scripted helper stays a prim::CallFunction: the caller casts nothing for it
# (the helper's own graph has the casts) nor for its own unlisted add.
# With --inline (INLINED) the helper's rewritten graph is spliced in: its mm
# comes with its own casts inside the caller's scope; its relu and the
# caller's add get none.
# RUN: jitamp dump %s:caller | filecheck %s
# RUN: jitamp dump %s:caller --inline | filecheck %s --check-prefix INLINED
import torch


def helper(a, b):
    return torch.mm(a, b).relu()


def caller(x, y):
    with torch.autocast("cpu"):
        z = helper(x, y)
        w = torch.add(z, x)
    return w

# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK-NOT: jitamp::autocast_to
# CHECK-NOT: cuda"
# CHECK: [[FN:%[^ ]+]] : Function = prim::Constant[name="helper"]()
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: %z.1 : Tensor = prim::CallFunction([[FN]], %x.1, %y.1)
# CHECK-NEXT: %w.1 : Tensor = aten::add(%z.1, %x.1,
# CHECK-NEXT: jitamp::autocast_exit([[G]])
# CHECK-NOT: jitamp::autocast_to

# INLINED-LABEL: graph(%x.1 : Tensor,
# INLINED-NOT: prim::CallFunction
# The caller itself casts nothing outside its scope: no caller-region node of
# its own (lit's implicit check-not: the dump holds only the one checked
# below, the helper's).
# INLINED: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# INLINED-NEXT: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# The helper was rewritten on its own before --inline: its casts keep the
# token of the helper's caller-region node, spliced in with its body.
# INLINED-NEXT: [[CR:%[^ ]+]] : int = jitamp::autocast_caller_region()
# INLINED-NEXT: [[Y:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%y.1, [[DEV]], [[CR]])
# INLINED-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV]], [[CR]])
# INLINED-NEXT: [[MM:%[^ ]+]] : Tensor = aten::mm([[X]], [[Y]])
# INLINED-NEXT: %z.1 : Tensor = aten::relu([[MM]])
# INLINED-NEXT: %w.1 : Tensor = aten::add(%z.1, %x.1,
# INLINED-NEXT: jitamp::autocast_exit([[G]])
# INLINED-NOT: prim::CallFunction
