# fp32 on both devices: inside F.mse_loss (inlined) aten::mse_loss gets the
# broadcast input and target cast with "cpu,cuda"; broadcast_tensors gets none.
# RUN: jitamp dump %s:loss --inline | filecheck %s
import torch
import torch.nn.functional as F


def loss(x, y):
    with torch.autocast("cpu"):
        l = F.mse_loss(x, y)
    return l

# F.mse_loss is rewritten on its own before --inline: its casts keep the
# token of its own caller-region node, which comes in with its body.
# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK: [[BOTH:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# CHECK: [[CR:%[^ ]+]] : int = jitamp::autocast_caller_region()
# CHECK: [[LIST:%[^ ]+]] : Tensor[] = prim::ListConstruct(%x.1, %y.1)
# CHECK-NEXT: [[BC:%[^ ]+]] : Tensor[] = aten::broadcast_tensors([[LIST]])
# CHECK-NEXT: %expanded_input.1 : Tensor, %expanded_target.1 : Tensor = prim::ListUnpack([[BC]])
# CHECK: [[T:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%expanded_target.1, [[BOTH]], [[CR]])
# CHECK-NEXT: [[I:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%expanded_input.1, [[BOTH]], [[CR]])
# CHECK-NEXT: aten::mse_loss([[I]], [[T]],
# CHECK: jitamp::autocast_exit([[G]])
