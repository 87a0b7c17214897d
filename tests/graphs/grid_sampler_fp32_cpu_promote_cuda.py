# grid_sampler is fp32 on CPU and promote on CUDA: first float32 casts with
# "cpu" on input and grid, then a two-tensor promote with "cuda" on those.
# RUN: jitamp dump %s:sample | filecheck %s --check-prefix DIRECT
# RUN: jitamp dump %s:sample_functional --inline | filecheck %s --check-prefix FUNCTIONAL
import torch
import torch.nn.functional as F


def sample(x, g):
    with torch.autocast("cpu"):
        y = torch.grid_sampler(x, g, 0, 0, False)
    return y


def sample_functional(x, g):
    with torch.autocast("cpu"):
        y = F.grid_sample(x, g, align_corners=False)
    return y

# DIRECT-LABEL: graph(%x.1 : Tensor,
# DIRECT-NOT: "cpu,cuda"
# DIRECT-DAG: [[CPU:%[^ ]+]] : str = prim::Constant[value="cpu"]()
# DIRECT-DAG: [[CUDA:%[^ ]+]] : str = prim::Constant[value="cuda"]()
# DIRECT: [[GD:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# DIRECT-NEXT: [[G:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%g.1, [[CPU]], [[R]])
# DIRECT-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%x.1, [[CPU]], [[R]])
# DIRECT-NEXT: [[PX:%[^ ]+]] : Tensor, [[PG:%[^ ]+]] : Tensor = jitamp::autocast_promote([[X]], [[G]], [[CUDA]], [[R]])
# DIRECT-NEXT: %y.1 : Tensor = aten::grid_sampler([[PX]], [[PG]],
# DIRECT-NEXT: jitamp::autocast_exit([[GD]])

# F.grid_sample is rewritten on its own before --inline: its casts keep the
# token of its own caller-region node, which comes in with its body.
# FUNCTIONAL-LABEL: graph(%x.1 : Tensor,
# FUNCTIONAL: [[GD:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# FUNCTIONAL-DAG: [[CPU:%[^ ]+]] : str = prim::Constant[value="cpu"]()
# FUNCTIONAL-DAG: [[CUDA:%[^ ]+]] : str = prim::Constant[value="cuda"]()
# FUNCTIONAL: [[CR:%[^ ]+]] : int = jitamp::autocast_caller_region()
# FUNCTIONAL: [[G:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%g.1, [[CPU]], [[CR]])
# FUNCTIONAL-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%x.1, [[CPU]], [[CR]])
# FUNCTIONAL-NEXT: [[PX:%[^ ]+]] : Tensor, [[PG:%[^ ]+]] : Tensor = jitamp::autocast_promote([[X]], [[G]], [[CUDA]], [[CR]])
# FUNCTIONAL-NEXT: aten::grid_sampler([[PX]], [[PG]],
# FUNCTIONAL-NEXT: jitamp::autocast_exit([[GD]])
