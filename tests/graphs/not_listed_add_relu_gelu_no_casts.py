# Ops on no autocast list (add, relu, gelu, mul) get no cast at all, and the
# graph gets no devices constant.
# RUN: jitamp dump %s:activations | filecheck %s
import torch
import torch.nn.functional as F


def activations(x, y):
    with torch.autocast("cpu"):
        a = torch.add(x, y)
        r = torch.relu(a)
        g = F.gelu(r)
        m = g * x
    return m

# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK-NOT: cuda"
# CHECK-NOT: jitamp::autocast_to
# CHECK-NOT: jitamp::autocast_promote
# Only the "cpu" of torch.autocast("cpu"): no devices constant was added.
# CHECK: str = prim::Constant[value="cpu"]()
# CHECK-NOT: str = prim::Constant
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: %a.1 : Tensor = aten::add(%x.1, %y.1,
# CHECK-NEXT: %r.1 : Tensor = aten::relu(%a.1)
# CHECK-NEXT: %g.1 : Tensor = aten::gelu(%r.1,
# CHECK-NEXT: %m.1 : Tensor = aten::mul(%g.1, %x.1)
# CHECK-NEXT: jitamp::autocast_exit([[G]])
# CHECK-NOT: jitamp::autocast_to
# CHECK-NOT: jitamp::autocast_promote
