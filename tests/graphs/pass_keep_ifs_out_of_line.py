# keep_ifs_out_of_line (simple_executor_plan, and the profiling executor's
# plan): KeepLoopsOutOfLine's workaround for a prim::If with one output used
# once, with a loop in its blocks that reads a value a later node of the
# if's block reads too. TorchScript's interpreter would emit the if inline
# at the add, which loads y first; the loop's read of y is then the use
# emitted last, which moves y out of its register in the first iteration,
# and the next reads None ("Expected Tensor but got None"; fuzz seed 1134).
# An if has no carried values to add, so it gets jitamp::keep_out_of_line()
# right after it (an op that does nothing and that no pass removes), and no
# longer lines up with its reader. A read in the if's blocks outside any
# loop runs once, and moving the value there loses nothing: the if of
# `once` is left alone (ONCE). The BEFORE run shows the graph the pass
# takes (the plan's steps before it, after the rewrite, configure and
# preoptimize).
# RUN: jitamp opt %s:grow_if --passes=rewrite,configure,preoptimize,remove_fold_barriers,hoist_loop_casts,remove_kernel_casts,unroll_loops,keep_loops_out_of_line_in_plan | filecheck %s --check-prefix BEFORE
# RUN: jitamp opt %s:grow_if --passes=rewrite,configure,preoptimize,remove_fold_barriers,hoist_loop_casts,remove_kernel_casts,unroll_loops,keep_loops_out_of_line_in_plan,keep_ifs_out_of_line | filecheck %s
# RUN: jitamp opt %s:once --passes=rewrite,configure,preoptimize,remove_fold_barriers,hoist_loop_casts,remove_kernel_casts,unroll_loops,keep_loops_out_of_line_in_plan,keep_ifs_out_of_line | filecheck %s --check-prefix ONCE
import torch


def grow_if(x, n: int, c: bool):
    y = x + 1
    if c:
        v = x
        for j in range(n):
            v = v * y
    else:
        v = x
    return y + v


def once(x, c: bool):
    y = x + 1
    if c:
        v = x * y
    else:
        v = x
    return y + v

# BEFORE: [[V:%[^ ]+]] : Tensor = prim::If(%c.1)
# BEFORE: block1():
# BEFORE-NEXT: -> (%x.1)
# BEFORE-NEXT: aten::add(%y.1, [[V]],

# CHECK: [[V:%[^ ]+]] : Tensor = prim::If(%c.1)
# CHECK: prim::Loop(
# CHECK: block1():
# CHECK-NEXT: -> (%x.1)
# CHECK-NEXT: = jitamp::keep_out_of_line()
# CHECK-NEXT: aten::add(%y.1, [[V]],

# ONCE: [[V:%[^ ]+]] : Tensor = prim::If(%c.1)
# ONCE: block1():
# ONCE-NEXT: -> (%x.1)
# ONCE-NEXT: aten::add(%y.1, [[V]],
# ONCE-NOT: jitamp::keep_out_of_line
