# With --inline the helper's rewritten graph is spliced in: its mm comes with
# its own casts inside the caller's scope; its relu and the caller's add get none.
# RUN: jitamp dump %s:caller --inline | filecheck %s
import torch


def helper(a, b):
    return torch.mm(a, b).relu()


def caller(x, y):
    with torch.autocast("cpu"):
        z = helper(x, y)
        w = torch.add(z, x)
    return w

# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK-NOT: prim::CallFunction
# The caller itself casts nothing outside its scope: no caller-region node of
# its own.
# CHECK-NOT: jitamp::autocast_caller_region
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# The helper was rewritten on its own before --inline: its casts keep the
# token of the helper's caller-region node, spliced in with its body.
# CHECK-NEXT: [[CR:%[^ ]+]] : int = jitamp::autocast_caller_region()
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV]], [[CR]])
# CHECK-NEXT: [[Y:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%y.1, [[DEV]], [[CR]])
# CHECK-NEXT: [[MM:%[^ ]+]] : Tensor = aten::mm([[X]], [[Y]])
# CHECK-NEXT: %z.1 : Tensor = aten::relu([[MM]])
# CHECK-NEXT: %w.1 : Tensor = aten::add(%z.1, %x.1,
# CHECK-NEXT: jitamp::autocast_exit([[G]])
# CHECK-NOT: prim::CallFunction
