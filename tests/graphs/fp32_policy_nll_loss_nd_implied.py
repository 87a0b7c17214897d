# aten::nll_loss_nd (what F.nll_loss calls; nll_loss/nll_loss2d run under it)
# is fp32 on both devices: input, target and the Tensor? weight get cast.
# RUN: jitamp dump %s:weighted_nll --inline | filecheck %s
import torch
import torch.nn.functional as F


def weighted_nll(x, t, w):
    with torch.autocast("cpu"):
        l = F.nll_loss(x, t, weight=w)
    return l

# F.nll_loss is rewritten on its own before --inline: its casts keep the
# token of its own caller-region node, which comes in with its body.
# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK: [[BOTH:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# CHECK: [[CR:%[^ ]+]] : int = jitamp::autocast_caller_region()
# CHECK-NOT: aten::nll_loss
# CHECK: [[W:%[^ ]+]] : Tensor? = jitamp::autocast_to_fp32(%w.1, [[BOTH]], [[CR]])
# CHECK-NEXT: [[T:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%t.1, [[BOTH]], [[CR]])
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%x.1, [[BOTH]], [[CR]])
# CHECK-NEXT: aten::nll_loss_nd([[X]], [[T]], [[W]],
# CHECK-NEXT: jitamp::autocast_exit([[G]])
