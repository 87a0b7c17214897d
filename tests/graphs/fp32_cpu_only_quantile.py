# fp32 on CPU only: quantile casts both the input and the q tensor, with
# devices "cpu"; CUDA leaves quantile alone.
# RUN: jitamp dump %s:quartiles | filecheck %s
import torch


def quartiles(x, q):
    with torch.autocast("cpu"):
        r = torch.quantile(x, q)
    return r

# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK-NOT: cuda"
# CHECK: [[CPU:%[^ ]+]] : str = prim::Constant[value="cpu"]()
# CHECK-NOT: cuda"
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: [[Q:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%q.1, [[CPU]], [[R]])
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%x.1, [[CPU]], [[R]])
# CHECK-NEXT: %r.1 : Tensor = aten::quantile([[X]], [[Q]],
# CHECK-NEXT: jitamp::autocast_exit([[G]])
