# A submodule called in a scope: forward keeps the prim::CallMethod, nothing cast
# around it; inlined, the Linear casts input, weight and bias inside the scope.
# RUN: jitamp dump %s:Outer | filecheck %s --check-prefix CALL
# RUN: jitamp dump %s:Outer --inline | filecheck %s --check-prefix INLINED
import torch
import torch.nn as nn


class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return self.lin(x)


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()

    def forward(self, x):
        with torch.autocast("cpu"):
            y = self.inner(x)
        return y

# CALL-LABEL: graph(%self : {{.*}}Outer,
# CALL-NOT: jitamp::autocast_to
# CALL: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CALL-NEXT: %inner : {{.*}}Inner = prim::GetAttr[name="inner"](%self)
# CALL-NEXT: %y.1 : Tensor = prim::CallMethod[name="forward"](%inner, %x.1)
# CALL-NEXT: jitamp::autocast_exit([[G]])
# CALL-NOT: jitamp::autocast_to

# Linear.forward is rewritten on its own before --inline: its casts keep the
# token of its caller-region node, spliced into the scope with its body.
# INLINED-LABEL: graph(%self : {{.*}}Outer,
# INLINED-NOT: prim::CallMethod[name="forward"]
# INLINED: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# INLINED: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# INLINED: [[CR:%[^ ]+]] : int = jitamp::autocast_caller_region()
# INLINED: [[WT:%[^ ]+]] : Tensor = prim::GetAttr[name="weight"](%lin)
# INLINED-NEXT: [[BS:%[^ ]+]] : Tensor = prim::GetAttr[name="bias"](%lin)
# INLINED-NEXT: [[B:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16([[BS]], [[DEV]], [[CR]])
# INLINED-NEXT: [[W:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16([[WT]], [[DEV]], [[CR]])
# INLINED-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV]], [[CR]])
# INLINED-NEXT: %y.1 : Tensor = aten::linear([[X]], [[W]], [[B]])
# INLINED-NEXT: jitamp::autocast_exit([[G]])
