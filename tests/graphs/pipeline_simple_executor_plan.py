# The simple_executor_plan pipeline: the graph jitamp's simple executor
# runs, made from the preoptimized copy (which callers keep inlining as it
# is). The pad's fold barrier goes (the simple executor runs no constant
# propagation); the loop's cast of w is made once before it; the casts the
# kernels make anyway go (the loop's), those of an op reading a weight
# stay; the loop of constant trip count is unrolled whole, its carried
# bools (configure's KeepLoopsOutOfLine) gone with it; the scope enters
# with jitamp::autocast_enter_in_plan from the autocast object's values,
# the object gone; each mm becomes jitamp::direct_call, the first taking
# its casts (cast_args); the caller's region token, read by nothing left,
# goes. tests/graphs/simple_executor_drops_kernel_casts.py shows the plan
# an executor actually runs (`jitamp dump --optimized`). The pad is spelled
# torch._C._nn.pad, the op itself: F.pad would be a call that `jitamp opt`
# does not rewrite. The BEFORE run shows the graph the pipeline takes
# (rewritten, configured, preoptimized).
# RUN: jitamp opt %s:plan --passes=rewrite,configure,preoptimize | filecheck %s --check-prefix BEFORE
# RUN: jitamp opt %s:plan --passes=rewrite,configure,preoptimize,simple_executor_plan | filecheck %s
import torch


def plan(x, w):
    p = torch._C._nn.pad(x, [1, 1], "reflect")
    with torch.autocast("cpu"):
        s = torch.mm(p, w)
        for _ in range(2):
            s = torch.mm(s, w)
    return s

# BEFORE: jitamp::autocast_caller_region()
# BEFORE: jitamp::autocast_dependent(%x.1,
# BEFORE: prim::CreateObject()
# BEFORE: jitamp::autocast_enter(
# BEFORE: prim::Loop(
# BEFORE-NEXT: block0(
# BEFORE-NEXT: jitamp::autocast_to_fp16(%w.1,

# CHECK-NOT: jitamp::autocast_caller_region
# CHECK-NOT: jitamp::autocast_dependent
# CHECK: [[CPU:%[^ ]+]] : str = prim::Constant[value="cpu"]()
# CHECK: %p.1 : Tensor = aten::pad(%x.1,
# CHECK-NEXT: [[DT:%[^ ]+]] : int = aten::get_autocast_dtype([[CPU]])
# CHECK-NEXT: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter_in_plan([[CPU]], [[DT]],
# CHECK-NEXT: %s.1 : Tensor = jitamp::direct_call[op="aten::mm", cast_args=[1, 0], cast_to_fp32=[0, 0], cast_devices=["cpu,cuda", "cpu,cuda"]](%p.1, %w.1)
# CHECK-NEXT: [[WL:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16_before_loop(%w.1, {{.*}}, [[R]])
# CHECK-NEXT: [[S1:%[^ ]+]] : Tensor = jitamp::direct_call[op="aten::mm"](%s.1, [[WL]])
# CHECK-NEXT: [[S2:%[^ ]+]] : Tensor = jitamp::direct_call[op="aten::mm"]([[S1]], [[WL]])
# CHECK-NEXT: jitamp::autocast_exit([[G]])
# CHECK-NEXT: return ([[S2]])
