# hoist_loop_casts (simple_executor_plan): a loop's smart cast of a value
# defined before the loop is made once, before it
# (jitamp::autocast_to_fp16_before_loop); the cast left in the body then
# finds its input already cast and does nothing. A cast of a value the loop
# carries (q) stays in the body. The BEFORE run shows the graph the pass
# takes (preoptimized).
# RUN: jitamp opt %s:attend --passes=rewrite,preoptimize | filecheck %s --check-prefix BEFORE
# RUN: jitamp opt %s:attend --passes=rewrite,preoptimize,hoist_loop_casts | filecheck %s
import torch


def attend(x, w):
    with torch.autocast("cpu"):
        q = torch.mm(x, w)
        for _ in range(3):
            q = torch.mm(q, w)
    return q

# BEFORE: prim::Loop(
# BEFORE-NEXT: block0(
# BEFORE-NEXT: [[W:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%w.1,
# BEFORE-NOT: autocast_to_fp16_before_loop

# CHECK: [[Q:%[^ ]+]] : Tensor = aten::mm(
# CHECK-NEXT: [[WL:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16_before_loop(%w.1,
# CHECK-NEXT: prim::Loop(
# CHECK-NEXT: block0(%{{[^ ]+}} : int, [[QI:%[^ ]+]] : Tensor):
# CHECK-NEXT: jitamp::autocast_to_fp16([[WL]],
# CHECK-NEXT: jitamp::autocast_to_fp16([[QI]],
# CHECK-NEXT: aten::mm(
