# caller_regions_as_constants (simple_executor_plan, last): the caller's
# region token (jitamp::autocast_caller_region_in_plan) keeps the casts of
# different regions apart through the passes (it keeps CSE and constant
# propagation within a region); no pass runs after this one, so it
# becomes the constant 0 its op returns where something still reads it
# (einsum's list cast, which no direct call takes), or goes where nothing
# does (only_mm: its casts went into the direct call). An op dispatch fewer
# per call of a function with code outside its scopes. The profiling
# executor's plan keeps the op (TorchScript's passes run on it after
# jitamp's). The BEFORE run shows the graph the pass takes (the simple
# executor's plan, the steps before it); ALONE_IN and ALONE are only_mm's.
# RUN: jitamp opt %s:outside --passes=rewrite,configure,preoptimize,remove_fold_barriers,hoist_loop_casts,remove_kernel_casts,unroll_loops,keep_loops_out_of_line_in_plan,keep_ifs_out_of_line,use_scope_ops_of_plans,call_autocast_ops_directly | filecheck %s --check-prefix BEFORE
# RUN: jitamp opt %s:outside --passes=rewrite,configure,preoptimize,remove_fold_barriers,hoist_loop_casts,remove_kernel_casts,unroll_loops,keep_loops_out_of_line_in_plan,keep_ifs_out_of_line,use_scope_ops_of_plans,call_autocast_ops_directly,caller_regions_as_constants | filecheck %s
# RUN: jitamp opt %s:only_mm --passes=rewrite,configure,preoptimize,remove_fold_barriers,hoist_loop_casts,remove_kernel_casts,unroll_loops,keep_loops_out_of_line_in_plan,keep_ifs_out_of_line,use_scope_ops_of_plans,call_autocast_ops_directly | filecheck %s --check-prefix ALONE_IN
# RUN: jitamp opt %s:only_mm --passes=rewrite,configure,preoptimize,remove_fold_barriers,hoist_loop_casts,remove_kernel_casts,unroll_loops,keep_loops_out_of_line_in_plan,keep_ifs_out_of_line,use_scope_ops_of_plans,call_autocast_ops_directly,caller_regions_as_constants | filecheck %s --check-prefix ALONE
import torch


def outside(x, w):
    return torch.mm(x, w) + torch.einsum("ij,jk->ik", x, w)


def only_mm(x, w):
    return torch.mm(x, w)

# BEFORE: [[CR:%[^ ]+]] : int = jitamp::autocast_caller_region_in_plan()
# BEFORE: jitamp::autocast_to_fp16({{%[^ ]+}}, {{%[^ ]+}}, [[CR]])

# CHECK-NOT: autocast_caller_region
# CHECK: [[ZERO:%[^ ]+]] : int = prim::Constant[value=0]()
# CHECK-NOT: autocast_caller_region
# CHECK: jitamp::direct_call[op="aten::mm",
# CHECK: [[L:%[^ ]+]] : Tensor[] = prim::ListConstruct(%x.1, %w.1)
# CHECK-NEXT: jitamp::autocast_to_fp16([[L]], {{%[^ ]+}}, [[ZERO]])
# CHECK-NOT: autocast_caller_region

# ALONE_IN: jitamp::autocast_caller_region_in_plan()
# ALONE_IN-NEXT: jitamp::direct_call[op="aten::mm",

# ALONE-NOT: autocast_caller_region
# ALONE-NOT: prim::Constant[value=0]
# ALONE: jitamp::direct_call[op="aten::mm", cast_args=[1, 0],
# ALONE-NOT: autocast_caller_region
