# After profiling runs (--optimized), the profiling executor's graph still has
# the smart casts and enter/exit: profiling never changes the rewrite, DCE
# keeps the ops, CSE merges casts only within a region. With the default
# simple executor the plan is the rewritten graph, inlined (SIMPLE); its
# executor drops only the casts that the op's autocast kernel makes anyway,
# and these all stay: each op reads an argument, which may be a weight
# (tests/graphs/simple_executor_drops_kernel_casts.py has the ones it drops).
# Its ops with an autocast kernel that only casts are called directly
# (jitamp::direct_call, ops/direct_call.h), relu, which has none, is not;
# a direct call makes the casts that only it reads first, in their order
# (cast_args: b's, w's, x's).
# The plan opens the scope with autocast_enter_in_plan (the op as saved raises:
# preoptimize.h, UseScopeOpsOfPlans), from the autocast object's values.
# RUN: jitamp dump %s:project --profiling-executor --optimized --example-inputs 4x4:float32,4x4:float32,4:float32 | filecheck %s
# RUN: jitamp dump %s:project --profiling-executor --optimized --example-inputs 4x4:bfloat16,4x4:float32,4:float32 | filecheck %s --check-prefix MIXED
# RUN: jitamp dump %s:project --optimized --example-inputs 4x4:float32,4x4:float32,4:float32 | filecheck %s --check-prefix SIMPLE
import torch
import torch.nn.functional as F


def project(x, w, b):
    with torch.autocast("cpu"):
        y = F.linear(x, w, b)
        z = torch.mm(y, w)
    return z.relu()

# CHECK-LABEL: graph(%x.1 : Tensor,
# The plan enters from the values the autocast object was set to
# (UseScopeOpsOfPlans): no object, no __init__ call, no attribute writes;
# and the cache flag, read right before the enter, the enter reads itself.
# CHECK-NOT: {{prim::CallMethod|prim::CreateObject|prim::SetAttr|jitamp::autocast_cache_enabled}}
# CHECK: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# CHECK-NOT: {{prim::CallMethod|prim::CreateObject|prim::SetAttr|jitamp::autocast_cache_enabled}}
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter_in_plan(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^)]+}})
# CHECK-DAG: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV]], [[R]])
# CHECK-DAG: [[W:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%w.1, [[DEV]], [[R]])
# CHECK-DAG: [[B:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%b.1, [[DEV]], [[R]])
# CHECK: [[Y:%[^ ]+]] : Tensor = aten::linear([[X]], [[W]], [[B]])
# Both casts of %w.1 are in one region, so the executor's CSE keeps one: mm
# takes the cast made for linear.
# CHECK-NOT: jitamp::autocast_to_fp16(%w.1,
# CHECK: [[Y2:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16([[Y]], [[DEV]], [[R]])
# CHECK-NOT: jitamp::autocast_to_fp16(%w.1,
# CHECK: [[Z:%[^ ]+]] : Tensor = aten::mm([[Y2]], [[W]])
# CHECK-NEXT: jitamp::autocast_exit([[G]])
# CHECK-NEXT: aten::relu([[Z]])

# MIXED-LABEL: graph(%x.1 : Tensor,
# MIXED: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# MIXED: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter_in_plan(
# MIXED-DAG: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV]], [[R]])
# MIXED-DAG: [[W:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%w.1, [[DEV]], [[R]])
# MIXED-DAG: [[B:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%b.1, [[DEV]], [[R]])
# MIXED: [[Y:%[^ ]+]] : Tensor = aten::linear([[X]], [[W]], [[B]])
# MIXED: [[Y2:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16([[Y]], [[DEV]], [[R]])
# MIXED: aten::mm([[Y2]], [[W]])
# MIXED: jitamp::autocast_exit([[G]])

# SIMPLE-LABEL: graph(%x.1 : Tensor,
# SIMPLE-NOT: prim::CallMethod
# SIMPLE: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter_in_plan(
# SIMPLE-NEXT: [[Y:%[^ ]+]] : Tensor = jitamp::direct_call[op="aten::linear", cast_args=[2, 1, 0], cast_to_fp32=[0, 0, 0], cast_devices=["cpu,cuda", "cpu,cuda", "cpu,cuda"]](%x.1, %w.1, %b.1)
# SIMPLE-NEXT: [[Z:%[^ ]+]] : Tensor = jitamp::direct_call[op="aten::mm", cast_args=[1, 0], cast_to_fp32=[0, 0], cast_devices=["cpu,cuda", "cpu,cuda"]]([[Y]], %w.1)
# SIMPLE-NEXT: jitamp::autocast_exit([[G]])
# SIMPLE-NEXT: aten::relu([[Z]])
