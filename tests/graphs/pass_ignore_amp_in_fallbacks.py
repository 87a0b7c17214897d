# ignore_amp_in_fallbacks (profiling executor's plan, before
# use_scope_ops_of_plans; profiling/ignore_amp_in_fallbacks.h): puts
# jitamp::ignore_amp_in_fallbacks() first in the plan. The op does nothing
# when it runs; when the interpreter compiles the plan it marks each
# fallback function the profiling executor made for it (those guarding its
# differentiable subgraphs, in the plan's outer graph, where no custom pass
# runs) `ignore_amp`, so that the built-in JIT autocast pass does not cast
# in them (mv in bfloat16 under a caller's CPU autocast, where eager keeps
# it float32), and puts the op first in the graphs their later plans are
# made from. The case shows the op made first, before the caller-region
# token and the constants the earlier passes put at the top, and made once
# (the pass is idempotent: a second run leaves the plan as it is, TWICE).
# The BEFORE run shows the graph the pass takes (the plan's steps before
# it, after the rewrite, configure and preoptimize).
# RUN: jitamp opt %s:residual --passes=rewrite,configure,preoptimize,insert_autodiff_boundaries,keep_addmm_whole,keep_ifs_out_of_line | filecheck %s --check-prefix BEFORE
# RUN: jitamp opt %s:residual --passes=rewrite,configure,preoptimize,insert_autodiff_boundaries,keep_addmm_whole,keep_ifs_out_of_line,ignore_amp_in_fallbacks | filecheck %s
# RUN: jitamp opt %s:residual --passes=rewrite,configure,preoptimize,insert_autodiff_boundaries,keep_addmm_whole,keep_ifs_out_of_line,ignore_amp_in_fallbacks,ignore_amp_in_fallbacks | filecheck %s --check-prefix TWICE
import torch


def residual(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = x + torch.mm(x, x)
    return y

# BEFORE: graph(%x.1 : Tensor):
# BEFORE-NEXT: [[CR:%[^ ]+]] : int = jitamp::autocast_caller_region()
# BEFORE: jitamp::autocast_dependent({{%[^ ]+}}, [[CR]])
# BEFORE-NOT: jitamp::ignore_amp_in_fallbacks

# CHECK: graph(%x.1 : Tensor):
# CHECK-NEXT: = jitamp::ignore_amp_in_fallbacks()
# CHECK-NEXT: [[CR:%[^ ]+]] : int = jitamp::autocast_caller_region()
# CHECK-NOT: jitamp::ignore_amp_in_fallbacks
# CHECK: jitamp::autocast_dependent({{%[^ ]+}}, [[CR]])
# CHECK-NOT: jitamp::ignore_amp_in_fallbacks

# TWICE: graph(%x.1 : Tensor):
# TWICE-NEXT: = jitamp::ignore_amp_in_fallbacks()
# TWICE-NOT: jitamp::ignore_amp_in_fallbacks
