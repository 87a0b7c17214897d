# call_autocast_ops_directly (simple_executor_plan, next to last): an op
# whose autocast kernel only casts (lower_precision_fp, fp32 or promote on
# CPU or CUDA, the installed torch's kernel) becomes
# jitamp::direct_call[op="aten::mm"], which makes that kernel's decisions
# and casts with eager's own functions and calls the op in one dispatch
# instead of two. The smart casts of a Tensor right before it that only it
# reads go into it (cast_args: their positions in order; cast_to_fp32;
# cast_devices): it makes them first, in their order, with the same
# function, an op dispatch fewer per cast. Here both mms (the caller's
# region and a bfloat16 scope) and mse_loss (fp32: cast_to_fp32=[1, 1])
# take their casts; einsum (CUDA lower precision) becomes a direct call
# too, but keeps its list cast (.list, not folded); relu and add, which no
# autocast kernel casts, stay aten ops. mse_loss is spelled
# torch._C._nn.mse_loss, the op itself (F.mse_loss would be a call that
# `jitamp opt` does not rewrite). The BEFORE run shows the graph the pass
# takes (the simple executor's plan, the steps before it).
# RUN: jitamp opt %s:direct --passes=rewrite,configure,preoptimize,remove_fold_barriers,hoist_loop_casts,remove_kernel_casts,unroll_loops,keep_loops_out_of_line_in_plan,keep_ifs_out_of_line,use_scope_ops_of_plans | filecheck %s --check-prefix BEFORE
# RUN: jitamp opt %s:direct --passes=rewrite,configure,preoptimize,remove_fold_barriers,hoist_loop_casts,remove_kernel_casts,unroll_loops,keep_loops_out_of_line_in_plan,keep_ifs_out_of_line,use_scope_ops_of_plans,call_autocast_ops_directly | filecheck %s
import torch


def direct(x, w):
    y = torch.mm(x, w).relu()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        z = torch.mm(y, w)
        l = torch._C._nn.mse_loss(z, w)
    return l + torch.einsum("ij,jk->ik", x, w)

# BEFORE: jitamp::autocast_to_fp16(%w.1,
# BEFORE-NEXT: jitamp::autocast_to_fp16(%x.1,
# BEFORE-NEXT: aten::mm(
# BEFORE: jitamp::autocast_to_fp32(%w.1,
# BEFORE-NEXT: jitamp::autocast_to_fp32(%z.1,
# BEFORE-NEXT: aten::mse_loss(
# BEFORE: aten::einsum(
# BEFORE-NOT: jitamp::direct_call

# CHECK: [[CR:%[^ ]+]] : int = jitamp::autocast_caller_region_in_plan()
# CHECK-NEXT: [[MM:%[^ ]+]] : Tensor = jitamp::direct_call[op="aten::mm", cast_args=[1, 0], cast_to_fp32=[0, 0], cast_devices=["cpu,cuda", "cpu,cuda"]](%x.1, %w.1)
# CHECK-NEXT: %y.1 : Tensor = aten::relu([[MM]])
# CHECK-NEXT: jitamp::autocast_enter_in_plan(
# CHECK-NEXT: %z.1 : Tensor = jitamp::direct_call[op="aten::mm", cast_args=[1, 0], cast_to_fp32=[0, 0], cast_devices=["cpu,cuda", "cpu,cuda"]](%y.1, %w.1)
# CHECK-NEXT: %l.1 : Tensor = jitamp::direct_call[op="aten::mse_loss", cast_args=[1, 0], cast_to_fp32=[1, 1], cast_devices=["cpu,cuda", "cpu,cuda"]](%z.1, %w.1,
# CHECK-NEXT: jitamp::autocast_exit(
# CHECK-NEXT: [[L:%[^ ]+]] : Tensor[] = prim::ListConstruct(%x.1, %w.1)
# CHECK-NEXT: [[LC:%[^ ]+]] : Tensor[] = jitamp::autocast_to_fp16([[L]], {{.*}}, [[CR]])
# CHECK-NEXT: [[E:%[^ ]+]] : Tensor = jitamp::direct_call[op="aten::einsum"]({{%[^ ]+}}, [[LC]],
# CHECK-NEXT: aten::add(%l.1, [[E]],
