# The simple executor's graph (--optimized, default executor) drops the smart
# casts that the op's own autocast kernel makes anyway: jitamp's scope ops set
# eager's autocast state, so every op in the scope casts its arguments itself.
# Dropped: the casts of an op that reads only activations, and every cast in a
# loop (eager's cache serves a weight's later iterations); a loop's cast of a
# value defined before it is made once before the loop instead
# (autocast_to_fp16_before_loop, test_simple_executor_plan.py). Then the
# plan unrolls the loop (a constant trip count under 64: whole), and calls
# each mm directly (jitamp::direct_call, its autocast kernel's casts made by
# jitamp's op). Kept: the casts of
# an op that reads an argument or attribute outside a loop (a weight's first
# cast is copied uncached with grad mode off, cast_ops.cpp), all of them, so
# that the kernel casts the rest in eager's order; the direct call makes
# them itself, first, in their order (cast_args: w's, then x's), each with
# its smart cast's function (cast_to_fp32, cast_devices). The rewritten graph keeps
# every cast (REWRITTEN): the profiling executor, freezing and callers that
# inline it read them.
# RUN: jitamp dump %s:attend --optimized --example-inputs 4x4:float32,4x4:float32 | filecheck %s
# RUN: jitamp dump %s:attend | filecheck %s --check-prefix REWRITTEN
import torch


def attend(x, w):
    with torch.autocast("cpu"):
        q = torch.mm(x, w)
        s = torch.mm(q, q.t())
        for _ in range(3):
            s = torch.mm(s, w)
    return s

# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK: , [[R:%[^ ]+]] : int = jitamp::autocast_enter_in_plan(
# CHECK-NEXT: [[Q:%[^ ]+]] : Tensor = jitamp::direct_call[op="aten::mm", cast_args=[1, 0], cast_to_fp32=[0, 0], cast_devices=["cpu,cuda", "cpu,cuda"]](%x.1, %w.1)
# CHECK-NEXT: [[QT:%[^ ]+]] : Tensor = aten::t([[Q]])
# CHECK-NEXT: [[S:%[^ ]+]] : Tensor = jitamp::direct_call[op="aten::mm"]([[Q]], [[QT]])
# CHECK-NEXT: [[WL:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16_before_loop(%w.1, {{.*}}, [[R]])
# CHECK-NEXT: [[S1:%[^ ]+]] : Tensor = jitamp::direct_call[op="aten::mm"]([[S]], [[WL]])
# CHECK-NEXT: [[S2:%[^ ]+]] : Tensor = jitamp::direct_call[op="aten::mm"]([[S1]], [[WL]])
# CHECK-NEXT: jitamp::direct_call[op="aten::mm"]([[S2]], [[WL]])
# CHECK-NEXT: jitamp::autocast_exit(

# REWRITTEN-LABEL: graph(%x.1 : Tensor,
# REWRITTEN-COUNT-4: jitamp::autocast_to_fp16(
# REWRITTEN: prim::Loop(
# REWRITTEN: jitamp::autocast_to_fp16(
# REWRITTEN: jitamp::autocast_to_fp16(
# REWRITTEN: aten::mm(
