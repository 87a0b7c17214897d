# promote on CPU only: cat and stack take one Tensor[] argument, promoted as a
# whole by the .list overload (devices "cpu"); CUDA has no policy for them.
# RUN: jitamp dump %s:join | filecheck %s
import torch


def join(x, y):
    with torch.autocast("cpu"):
        c = torch.cat([x, y], 0)
        s = torch.stack([x, y])
    return c, s

# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK-NOT: cuda"
# CHECK: [[CPU:%[^ ]+]] : str = prim::Constant[value="cpu"]()
# CHECK-NOT: cuda"
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: [[L1:%[^ ]+]] : Tensor[] = prim::ListConstruct(%x.1, %y.1)
# CHECK-NEXT: [[P1:%[^ ]+]] : Tensor[] = jitamp::autocast_promote([[L1]], [[CPU]], [[R]])
# CHECK-NEXT: %c.1 : Tensor = aten::cat([[P1]],
# CHECK-NEXT: [[L2:%[^ ]+]] : Tensor[] = prim::ListConstruct(%x.1, %y.1)
# CHECK-NEXT: [[P2:%[^ ]+]] : Tensor[] = jitamp::autocast_promote([[L2]], [[CPU]], [[R]])
# CHECK-NEXT: %s.1 : Tensor = aten::stack([[P2]],
# CHECK-NEXT: jitamp::autocast_exit([[G]])
