# The profiling_executor_plan pipeline (ProfilingExecutorPlan,
# pipeline/pipeline.cpp; docs/passes.md): what TorchScript's profiling (or
# legacy) executor compiles, jitamp's PreoptimizedCopy edited in place
# (pipeline/function_rewrite.cpp), which callers then inline. Its
# characteristic result: jitamp::ignore_amp_in_fallbacks() first (the
# fallbacks the executor makes run without the built-in JIT autocast pass);
# a value that may be in bfloat16 read through jitamp::autocast_dependent
# where it meets another tensor (symbolic autodiff's subgraphs end there:
# the addmm's result at the add, relu's after the scope), x (float32) read
# directly; the addmm's beta (the constant 1) read through one too, so that
# DecomposeOps does not split it into mm + add; the scope entered with
# jitamp::autocast_enter_in_plan from the autocast object's values, the
# object gone, and the caller's region token as
# jitamp::autocast_caller_region_in_plan, which stays (TorchScript's passes
# run after jitamp's). Unlike the simple executor's plan, the smart casts
# stay as they are (the executor's autodiff, fusers and guards read them).
# keep_ifs_out_of_line: tests/graphs/pass_keep_ifs_out_of_line.py. The
# BEFORE run shows the graph the pipeline takes (rewritten, configured,
# preoptimized).
# RUN: jitamp opt %s:plan --passes=rewrite,configure,preoptimize | filecheck %s --check-prefix BEFORE
# RUN: jitamp opt %s:plan --passes=rewrite,configure,preoptimize,profiling_executor_plan | filecheck %s
import torch


def plan(x, b, w):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        h = torch.addmm(b, x, w)
        y = x + h
    return y.relu() + x

# BEFORE: [[ONE:%[^ ]+]] : int = prim::Constant[value=1]()
# BEFORE: prim::CreateObject()
# BEFORE: jitamp::autocast_enter(
# BEFORE: %h.1 : Tensor = aten::addmm({{.*}}, [[ONE]], [[ONE]])
# BEFORE-NEXT: %y.1 : Tensor = aten::add(%x.1, %h.1,
# BEFORE-NOT: jitamp::autocast_dependent
# BEFORE-NOT: jitamp::ignore_amp_in_fallbacks

# CHECK: graph(
# CHECK-NOT: prim::Constant
# CHECK: = jitamp::ignore_amp_in_fallbacks()
# CHECK-NEXT: [[CR:%[^ ]+]] : int = jitamp::autocast_caller_region_in_plan()
# CHECK: [[CPU:%[^ ]+]] : str = prim::Constant[value="cpu"]()
# CHECK-NEXT: [[BF16:%[^ ]+]] : int = prim::Constant[value=15]()
# CHECK-NEXT: [[ON:%[^ ]+]] : bool = prim::Constant[value=1]()
# CHECK: [[ONE:%[^ ]+]] : int = prim::Constant[value=1]()
# CHECK-NOT: prim::CreateObject
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter_in_plan([[CPU]], [[BF16]], [[ON]],
# CHECK-NEXT: [[W:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%w.1, {{.*}}, [[R]])
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, {{.*}}, [[R]])
# CHECK-NEXT: [[B:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%b.1, {{.*}}, [[R]])
# CHECK-NEXT: [[BETA:%[^ ]+]] : int = jitamp::autocast_dependent([[ONE]], [[CR]])
# CHECK-NEXT: %h.1 : Tensor = aten::addmm([[B]], [[X]], [[W]], [[BETA]], [[ONE]])
# CHECK-NEXT: [[H:%[^ ]+]] : Tensor = jitamp::autocast_dependent(%h.1, [[CR]])
# CHECK-NEXT: %y.1 : Tensor = aten::add(%x.1, [[H]],
# CHECK-NEXT: jitamp::autocast_exit([[G]])
# CHECK-NEXT: [[RL:%[^ ]+]] : Tensor = aten::relu(%y.1)
# CHECK-NEXT: [[RLB:%[^ ]+]] : Tensor = jitamp::autocast_dependent([[RL]], [[CR]])
# CHECK-NEXT: [[Z:%[^ ]+]] : Tensor = aten::add([[RLB]], %x.1,
# CHECK-NEXT: return ([[Z]])
