# remove_kernel_casts (simple_executor_plan): the simple executor's plan
# drops the smart casts that the op's own autocast kernel makes anyway.
# jitamp's scope ops set eager's autocast state, so every op in the scope
# dispatches through eager's autocast kernel, which casts its arguments as
# eager does; a smart cast before it only does that work first, at the
# price of an interpreter op. Kept: the casts of an op outside any loop
# that reads a value that may be a weight (a graph input or attribute: the
# smart cast copies a weight's first cast uncached with grad mode off), all
# of that op's casts together (the kernel casts in eager's order, which
# numbers the casts' autograd nodes; one cast before the op and one in the
# kernel would swap them): q's mm reads w and relu(x), and keeps both.
# Dropped: the casts of an op reading only activations (s.1's mm), and
# every cast in a loop (eager's cache serves later iterations; the cast of
# w was hoisted before the loop, which stays). A list cast
# (autocast_promote of cat's list) is kept: its result is a new list. The
# BEFORE run shows the graph the pass takes (the plan's steps before it).
# RUN: jitamp opt %s:attend --passes=rewrite,configure,preoptimize,remove_fold_barriers,hoist_loop_casts | filecheck %s --check-prefix BEFORE
# RUN: jitamp opt %s:attend --passes=rewrite,configure,preoptimize,remove_fold_barriers,hoist_loop_casts,remove_kernel_casts | filecheck %s
import torch


def attend(x, w):
    with torch.autocast("cpu"):
        q = torch.mm(x.relu(), w)
        s = torch.mm(q, q.t())
        for _ in range(3):
            s = torch.mm(s, w)
        c = torch.cat([s, x])
    return c

# BEFORE: [[QT:%[^ ]+]] : Tensor = aten::t(%q.1)
# BEFORE-NEXT: jitamp::autocast_to_fp16([[QT]],
# BEFORE-NEXT: jitamp::autocast_to_fp16(%q.1,
# BEFORE-NEXT: %s.1 : Tensor = aten::mm(
# BEFORE: prim::Loop(
# BEFORE-NEXT: block0(
# BEFORE-NEXT: jitamp::autocast_to_fp16(
# BEFORE-NEXT: jitamp::autocast_to_fp16(
# BEFORE-NEXT: aten::mm(

# CHECK: [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: [[XR:%[^ ]+]] : Tensor = aten::relu(%x.1)
# CHECK-NEXT: [[W:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%w.1, {{.*}}, [[R]])
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16([[XR]], {{.*}}, [[R]])
# CHECK-NEXT: %q.1 : Tensor = aten::mm([[X]], [[W]])
# CHECK-NEXT: [[QT:%[^ ]+]] : Tensor = aten::t(%q.1)
# CHECK-NEXT: %s.1 : Tensor = aten::mm(%q.1, [[QT]])
# CHECK-NEXT: [[WL:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16_before_loop(%w.1,
# CHECK-NEXT: %s : Tensor{{.*}} = prim::Loop(
# CHECK-NEXT: block0(%{{[^ ]+}} : int, [[SI:%[^ ]+]] : Tensor
# CHECK-NEXT: aten::mm([[SI]], [[WL]])
# CHECK-NEXT: -> (
# CHECK-NEXT: [[L:%[^ ]+]] : Tensor[] = prim::ListConstruct(%s, %x.1)
# CHECK-NEXT: [[LC:%[^ ]+]] : Tensor[] = jitamp::autocast_promote([[L]],
# CHECK-NEXT: aten::cat([[LC]],
