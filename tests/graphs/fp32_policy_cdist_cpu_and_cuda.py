# fp32 on both devices: torch.cdist stays a CallFunction (nothing cast in the
# caller); inlined, each aten::cdist gets both inputs cast with "cpu,cuda".
# RUN: jitamp dump %s:distances | filecheck %s --check-prefix CALL
# RUN: jitamp dump %s:distances --inline | filecheck %s --check-prefix INLINED
import torch


def distances(x, y):
    with torch.autocast("cpu"):
        d = torch.cdist(x, y)
    return d

# CALL-LABEL: graph(%x.1 : Tensor,
# CALL-NOT: jitamp::autocast_to
# CALL: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CALL-NEXT: %d.1 : Tensor = prim::CallFunction({{%[^ ]+}}, %x.1, %y.1,
# CALL-NEXT: jitamp::autocast_exit([[G]])
# CALL-NOT: jitamp::autocast_to

# INLINED-LABEL: graph(%x.1 : Tensor,
# INLINED: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# The inlined callee brings its own devices constant: both devices. It was
# rewritten on its own before --inline, so its casts keep the token of its
# own caller-region node, which comes in with its body.
# INLINED: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# INLINED: [[CR:%[^ ]+]] : int = jitamp::autocast_caller_region()
# INLINED: [[Y1:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%y.1, [[DEV]], [[CR]])
# INLINED-NEXT: [[X1:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%x.1, [[DEV]], [[CR]])
# INLINED-NEXT: aten::cdist([[X1]], [[Y1]],
# INLINED: [[Y2:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%y.1, [[DEV]], [[CR]])
# INLINED-NEXT: [[X2:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%x.1, [[DEV]], [[CR]])
# INLINED-NEXT: aten::cdist([[X2]], [[Y2]],
# INLINED: [[Y3:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%y.1, [[DEV]], [[CR]])
# INLINED-NEXT: [[X3:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%x.1, [[DEV]], [[CR]])
# INLINED-NEXT: aten::cdist([[X3]], [[Y3]],
# INLINED: jitamp::autocast_exit([[G]])
# INLINED-NOT: aten::cdist
