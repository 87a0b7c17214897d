# The graph jitamp.export converts: the scope's enter op takes its device
# type, dtype, enabled and cache flags as constants (the autocast object
# and its checks are gone), the inlined Linear's smart casts are gone, the
# submodule call is inlined; a nested disabled scope keeps its own enter.
# RUN: jitamp dump %s:Outer --export | filecheck %s
import torch
import torch.nn as nn


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.float16, cache_enabled=False):
            y = self.lin(x)
            with torch.autocast("cpu", enabled=False):
                z = torch.mm(y.float(), y.float())
        return z

# CHECK-LABEL: graph(%self{{[^ ]*}} : {{.*}}Outer,
# CHECK-NOT: prim::CreateObject
# CHECK-NOT: jitamp::autocast_to
# CHECK-DAG: [[CPU:%[^ ]+]] : str = prim::Constant[value="cpu"]()
# CHECK-DAG: [[F16:%[^ ]+]] : int = prim::Constant[value=5]()
# CHECK-DAG: [[FALSE:%[^ ]+]] : bool = prim::Constant[value=0]()
# CHECK-DAG: [[TRUE:%[^ ]+]] : bool = prim::Constant[value=1]()
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, {{%[^ ]+}} : int = jitamp::autocast_enter([[CPU]], [[F16]], [[TRUE]], [[FALSE]])
# CHECK: aten::linear(%x{{[^,]*}}, %weight{{[^,]*}}, %bias{{[^)]*}})
# CHECK: [[G2:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, {{%[^ ]+}} : int = jitamp::autocast_enter([[CPU]], {{%[^ ]+}}, [[FALSE]], {{%[^ ]+}})
# CHECK: aten::to(
# CHECK: aten::to(
# CHECK: aten::mm(
# CHECK: jitamp::autocast_exit([[G2]])
# CHECK: jitamp::autocast_exit([[G]])
# CHECK-NOT: jitamp::
