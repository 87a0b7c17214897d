# aten::cross_entropy_loss is fp32 on CPU (its own autocast kernel). On CUDA
# it has none: eager reaches log_softmax with the half input and its
# fp32_set_opt_dtype policy, which a cast to float32 first would not
# reproduce bit for bit, so the IR gets no CUDA cast (the dispatcher applies
# eager's policy at run time): one cast per tensor with devices "cpu".
# RUN: jitamp dump %s:ce --inline | filecheck %s
import torch
import torch.nn.functional as F


def ce(x, t):
    with torch.autocast("cpu"):
        l = F.cross_entropy(x, t)
    return l

# F.cross_entropy is rewritten on its own before --inline: its casts keep the
# token of its own caller-region node, which comes in with its body.
# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK: [[CPU:%[^ ]+]] : str = prim::Constant[value="cpu"]()
# CHECK: [[CR:%[^ ]+]] : int = jitamp::autocast_caller_region()
# CHECK-NOT: prim::Constant[value="cpu,cuda"]
# CHECK-NOT: prim::Constant[value="cuda"]
# CHECK: [[W:%[^ ]+]] : Tensor? = jitamp::autocast_to_fp32({{%[^ ]+}}, [[CPU]], [[CR]])
# CHECK-NEXT: [[T:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%t.1, [[CPU]], [[CR]])
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%x.1, [[CPU]], [[CR]])
# CHECK-NEXT: aten::cross_entropy_loss([[X]], [[T]], [[W]],
# CHECK-NEXT: jitamp::autocast_exit([[G]])
