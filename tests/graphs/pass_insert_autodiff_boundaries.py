# insert_autodiff_boundaries (first in the profiling executor's plan,
# ProfilingExecutorPlan; profiling/insert_autodiff_boundaries.h): a value
# that may be in lower precision (linear's result behind smart casts, and
# what is computed from it) is read through jitamp::autocast_dependent, an
# identity symbolic autodiff has no formula for, by each aten op that reads
# two tensors or more. The differentiable subgraph ends there and eager's
# autograd engine casts the gradient that crosses it (in `x + linear(x)`
# under bfloat16, linear's backward got add's float32 gradient: "expected
# m1 and m2 to have the same dtype"). The case shows: the add reads h
# through a boundary and x (float32, not lower) directly; the boundary is
# made right before the add and the sub reuses it; relu, one tensor, reads h
# directly; linear reads jitamp's casts directly (they end subgraphs
# already); the boundaries read one caller-region token the pass makes. The
# BEFORE run shows the graph the pass takes (rewritten, configured,
# preoptimized: what the profiling executor's plan starts from).
# RUN: jitamp opt %s:residual --passes=rewrite,configure,preoptimize | filecheck %s --check-prefix BEFORE
# RUN: jitamp opt %s:residual --passes=rewrite,configure,preoptimize,insert_autodiff_boundaries | filecheck %s
import torch
import torch.nn.functional as F


def residual(x, w):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        h = F.linear(x, w)
        y = x + h
        z = torch.relu(h) * (y - h)
    return z

# BEFORE-NOT: jitamp::autocast_dependent
# BEFORE: %h.1 : Tensor = aten::linear(
# BEFORE-NEXT: %y.1 : Tensor = aten::add(%x.1, %h.1,
# BEFORE-NEXT: [[RL:%[^ ]+]] : Tensor = aten::relu(%h.1)
# BEFORE-NEXT: [[S:%[^ ]+]] : Tensor = aten::sub(%y.1, %h.1,
# BEFORE-NEXT: %z.1 : Tensor = aten::mul([[RL]], [[S]])
# BEFORE-NOT: jitamp::autocast_dependent

# CHECK: [[CR:%[^ ]+]] : int = jitamp::autocast_caller_region()
# CHECK: [[W:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%w.1,
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1,
# CHECK-NEXT: %h.1 : Tensor = aten::linear([[X]], [[W]],
# CHECK-NEXT: [[H:%[^ ]+]] : Tensor = jitamp::autocast_dependent(%h.1, [[CR]])
# CHECK-NEXT: %y.1 : Tensor = aten::add(%x.1, [[H]],
# CHECK-NEXT: [[RL:%[^ ]+]] : Tensor = aten::relu(%h.1)
# CHECK-NEXT: [[Y:%[^ ]+]] : Tensor = jitamp::autocast_dependent(%y.1, [[CR]])
# CHECK-NEXT: [[S:%[^ ]+]] : Tensor = aten::sub([[Y]], [[H]],
# CHECK-NEXT: [[RLB:%[^ ]+]] : Tensor = jitamp::autocast_dependent([[RL]], [[CR]])
# CHECK-NEXT: [[SB:%[^ ]+]] : Tensor = jitamp::autocast_dependent([[S]], [[CR]])
# CHECK-NEXT: %z.1 : Tensor = aten::mul([[RLB]], [[SB]])
