# binary_cross_entropy is fp32 on CPU and banned on CUDA: only float32 casts
# with "cpu"; nothing for CUDA, where eager's dispatcher raises as it should.
# RUN: jitamp dump %s:bce | filecheck %s --check-prefix DIRECT
# RUN: jitamp dump %s:bce_functional --inline | filecheck %s --check-prefix FUNCTIONAL
import torch
import torch.nn.functional as F


def bce(x, t):
    with torch.autocast("cpu"):
        l = torch._C._nn.binary_cross_entropy(x, t)
    return l


def bce_functional(x, t):
    with torch.autocast("cpu"):
        l = F.binary_cross_entropy(x, t)
    return l

# DIRECT-LABEL: graph(%x.1 : Tensor,
# DIRECT-NOT: cuda"
# DIRECT: [[CPU:%[^ ]+]] : str = prim::Constant[value="cpu"]()
# DIRECT-NOT: cuda"
# DIRECT: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# DIRECT-NEXT: [[T:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%t.1, [[CPU]], [[R]])
# DIRECT-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%x.1, [[CPU]], [[R]])
# DIRECT-NEXT: %l.1 : Tensor = aten::binary_cross_entropy([[X]], [[T]],
# DIRECT-NEXT: jitamp::autocast_exit([[G]])

# F.binary_cross_entropy is rewritten on its own, before --inline splices it
# into the scope: its casts keep the token of its own caller-region node,
# which comes in with its body.
# FUNCTIONAL-LABEL: graph(%x.1 : Tensor,
# FUNCTIONAL-NOT: cuda"
# FUNCTIONAL: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# FUNCTIONAL-NOT: cuda"
# FUNCTIONAL: [[CPU:%[^ ]+]] : str = prim::Constant[value="cpu"]()
# FUNCTIONAL: [[CR:%[^ ]+]] : int = jitamp::autocast_caller_region()
# FUNCTIONAL-NOT: cuda"
# FUNCTIONAL-NOT: jitamp::autocast_exit
# FUNCTIONAL: [[W:%[^ ]+]] : Tensor? = jitamp::autocast_to_fp32(%weight, [[CPU]], [[CR]])
# FUNCTIONAL-NEXT: [[T:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%t.1, [[CPU]], [[CR]])
# FUNCTIONAL-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%x.1, [[CPU]], [[CR]])
# FUNCTIONAL-NEXT: aten::binary_cross_entropy([[X]], [[T]], [[W]],
# FUNCTIONAL-NEXT: jitamp::autocast_exit([[G]])
# FUNCTIONAL-NOT: cuda"
