# use_scope_ops_of_plans (last in the profiling executor's plan; in the
# simple executor's, before the direct calls): the ops as saved,
# jitamp::autocast_enter and autocast_caller_region, raise when they run,
# which tells a function jitamp did not configure (a copy made by
# Module::clone, a caller scripted without jitamp that inlines a jitamp
# callee: its executor would be TorchScript's default, whose results
# differ from eager's). jitamp's plans use the _in_plan kinds instead,
# which work. A scope whose autocast object is made for it alone (set once
# in its block, read by nothing else) enters from the object's values
# (device, dtype, enabled, cache flag), and the object goes with its
# attribute writes: they cost more than the enter. The BEFORE run shows the
# graph the pass takes (the simple executor's plan, the steps before it).
# RUN: jitamp opt %s:scoped --passes=rewrite,configure,preoptimize,remove_fold_barriers,hoist_loop_casts,remove_kernel_casts,unroll_loops,keep_loops_out_of_line_in_plan,keep_ifs_out_of_line | filecheck %s --check-prefix BEFORE
# RUN: jitamp opt %s:scoped --passes=rewrite,configure,preoptimize,remove_fold_barriers,hoist_loop_casts,remove_kernel_casts,unroll_loops,keep_loops_out_of_line_in_plan,keep_ifs_out_of_line,use_scope_ops_of_plans | filecheck %s
import torch


def scoped(x, w):
    y = torch.mm(x, w).relu()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        z = torch.mm(y, w)
    return z

# BEFORE: [[CR:%[^ ]+]] : int = jitamp::autocast_caller_region()
# BEFORE-NEXT: jitamp::autocast_to_fp16(%w.1, {{.*}}, [[CR]])
# BEFORE: [[AC:%[^ ]+]] : __torch__.torch.amp.autocast_mode.autocast = prim::CreateObject()
# BEFORE: prim::SetAttr[name="fast_dtype"]([[AC]],
# BEFORE: , [[R:%[^ ]+]] : int = jitamp::autocast_enter([[AC]])
# BEFORE-NEXT: jitamp::autocast_to_fp16(%w.1, {{.*}}, [[R]])

# CHECK: [[CPU:%[^ ]+]] : str = prim::Constant[value="cpu"]()
# CHECK: [[BF16:%[^ ]+]] : int = prim::Constant[value=15]()
# CHECK: [[ON:%[^ ]+]] : bool = prim::Constant[value=1]()
# CHECK-NOT: prim::CreateObject
# CHECK: [[CR:%[^ ]+]] : int = jitamp::autocast_caller_region_in_plan()
# CHECK-NEXT: jitamp::autocast_to_fp16(%w.1, {{.*}}, [[CR]])
# CHECK-NOT: prim::CreateObject
# CHECK-NOT: prim::SetAttr
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter_in_plan([[CPU]], [[BF16]], [[ON]],
# CHECK-NEXT: jitamp::autocast_to_fp16(%w.1, {{.*}}, [[R]])
# CHECK: jitamp::autocast_exit([[G]])
