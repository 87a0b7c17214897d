# lower_precision_fp: scaled_dot_product_attention casts query, key, value and
# a given attn_mask; with no mask the None constant is passed through uncast.
# RUN: jitamp dump %s:attend_masked | filecheck %s --check-prefix MASK
# RUN: jitamp dump %s:attend | filecheck %s --check-prefix NOMASK
import torch
import torch.nn.functional as F


def attend_masked(q, k, v, m):
    with torch.autocast("cpu"):
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=m)
    return o


def attend(q, k, v):
    with torch.autocast("cpu"):
        o = F.scaled_dot_product_attention(q, k, v)
    return o

# MASK-LABEL: graph(%q.1 : Tensor,
# MASK: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# MASK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# MASK-NEXT: [[M:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%m.1, [[DEV]], [[R]])
# MASK-NEXT: [[V:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%v.1, [[DEV]], [[R]])
# MASK-NEXT: [[K:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%k.1, [[DEV]], [[R]])
# MASK-NEXT: [[Q:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%q.1, [[DEV]], [[R]])
# MASK-NEXT: %o.1 : Tensor = aten::scaled_dot_product_attention([[Q]], [[K]], [[V]], [[M]],
# MASK-NEXT: jitamp::autocast_exit([[G]])

# NOMASK-LABEL: graph(%q.1 : Tensor,
# NOMASK: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# NOMASK: [[NONE:%[^ ]+]] : NoneType = prim::Constant()
# NOMASK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# NOMASK-NEXT: [[V:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%v.1, [[DEV]], [[R]])
# NOMASK-NEXT: [[K:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%k.1, [[DEV]], [[R]])
# NOMASK-NEXT: [[Q:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%q.1, [[DEV]], [[R]])
# NOMASK-NEXT: %o.1 : Tensor = aten::scaled_dot_product_attention([[Q]], [[K]], [[V]], [[NONE]],
# NOMASK-NEXT: jitamp::autocast_exit([[G]])
