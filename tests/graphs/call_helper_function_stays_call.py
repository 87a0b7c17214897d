# A scripted helper stays a prim::CallFunction: the caller casts nothing for it
# (the helper's own graph has the casts) nor for its own unlisted add.
# RUN: jitamp dump %s:caller | filecheck %s
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
# No cast anywhere, so no caller-region node either.
# CHECK-NOT: jitamp::autocast_caller_region
# CHECK: [[FN:%[^ ]+]] : Function = prim::Constant[name="helper"]()
# CHECK-NOT: jitamp::autocast_caller_region
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: %z.1 : Tensor = prim::CallFunction([[FN]], %x.1, %y.1)
# CHECK-NEXT: %w.1 : Tensor = aten::add(%z.1, %x.1,
# CHECK-NEXT: jitamp::autocast_exit([[G]])
# CHECK-NOT: jitamp::autocast_to
