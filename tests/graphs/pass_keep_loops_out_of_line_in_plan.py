# keep_loops_out_of_line_in_plan (simple_executor_plan, after unroll_loops):
# KeepLoopsOutOfLine (the configure step) gave the loop two carried bools,
# swapped each iteration, so that TorchScript's interpreter never emits it
# inline at its one reader: emitted inline at the add, which loads y first,
# the loop's read of y is the use emitted last, which moves y out of its
# register in the first iteration, and the next reads None ("Expected
# Tensor but got None"). Unrolling made two loops of it, the loop of 8
# (whose body returns the bools as they came, after 8 swaps) feeding its
# bools to the loop for the rest (which swaps them once). The simple
# executor's plan, which no caller inlines and no TorchScript pass
# optimizes further, drops both loops' bools (last loop first: the
# epilogue reads the first loop's) and puts jitamp::keep_out_of_line()
# right after each loop that still needs it: an op that runs once per loop
# instead of two carried values per iteration. The BEFORE run shows the
# graph the pass takes (the plan's steps before it, after the rewrite,
# configure and preoptimize).
# RUN: jitamp opt %s:grow --passes=rewrite,configure,preoptimize,remove_fold_barriers,hoist_loop_casts,remove_kernel_casts,unroll_loops | filecheck %s --check-prefix BEFORE
# RUN: jitamp opt %s:grow --passes=rewrite,configure,preoptimize,remove_fold_barriers,hoist_loop_casts,remove_kernel_casts,unroll_loops,keep_loops_out_of_line_in_plan | filecheck %s
import torch


def grow(x, n: int):
    y = x + 1
    v = x
    for j in range(n):
        v = v * y
    return y + v

# BEFORE: [[V8:%[^ ]+]] : Tensor, [[A:%[^ ]+]] : bool, [[B:%[^ ]+]] : bool = prim::Loop(
# BEFORE-NEXT: block0(%{{[^ ]+}} : int, %{{[^ ]+}} : Tensor, [[A1:%[^ ]+]] : bool, [[B1:%[^ ]+]] : bool):
# BEFORE-COUNT-8: aten::mul(
# BEFORE-NEXT: -> (%{{[^ ]+}}, %{{[^ ]+}}, [[A1]], [[B1]])
# BEFORE-NEXT: [[V:%[^ ]+]] : Tensor, {{%[^ ]+}} : bool, {{%[^ ]+}} : bool = prim::Loop(%{{[^ ]+}}, %{{[^ ]+}}, [[V8]], [[A]], [[B]])
# BEFORE-NEXT: block0(%{{[^ ]+}} : int, %{{[^ ]+}} : Tensor, [[A2:%[^ ]+]] : bool, [[B2:%[^ ]+]] : bool):
# BEFORE-NEXT: aten::mul(
# BEFORE-NEXT: -> (%{{[^ ]+}}, %{{[^ ]+}}, [[B2]], [[A2]])
# BEFORE-NEXT: aten::add(%y.1, [[V]],

# CHECK-NOT: jitamp_out_of_line
# CHECK: [[V8:%[^ ]+]] : Tensor = prim::Loop(%{{[^ ]+}}, %{{[^ ]+}}, %x.1)
# CHECK-NEXT: block0(%{{[^ ]+}} : int, %{{[^ ]+}} : Tensor):
# CHECK-COUNT-8: aten::mul(
# CHECK-NEXT: -> (%{{[^ ]+}}, %{{[^ ]+}})
# CHECK-NEXT: = jitamp::keep_out_of_line()
# CHECK-NEXT: [[V:%[^ ]+]] : Tensor = prim::Loop(%{{[^ ]+}}, %{{[^ ]+}}, [[V8]])
# CHECK-NEXT: block0(%{{[^ ]+}} : int, %{{[^ ]+}} : Tensor):
# CHECK-NEXT: aten::mul(
# CHECK-NEXT: -> (%{{[^ ]+}}, %{{[^ ]+}})
# CHECK-NEXT: = jitamp::keep_out_of_line()
# CHECK-NEXT: aten::add(%y.1, [[V]],
