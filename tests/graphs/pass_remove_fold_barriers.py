# remove_fold_barriers (simple_executor_plan, first): the fold barriers
# (jitamp::autocast_dependent, ir/fold_barriers.h) go from the simple
# executor's plan, each op reading the tensor the barrier guarded. The
# rewrite puts one before an op whose result the autocast state decides
# with no cast in the IR, where its inputs may all become constants: here
# the reflect pad, whose composite reaches reflection_pad1d, which eager's
# CPU autocast runs in float32 (docs/frozen.md, "Fold barriers"). A barrier
# keeps the op from constant propagation, which freezing and the profiling
# executor run; the simple executor runs none, so in its plan a barrier
# would only cost an op dispatch. Barriers in the caller's region (y) and in
# a scope (z) both go. The pad is spelled torch._C._nn.pad, the op itself:
# F.pad would be a call that `jitamp opt` does not rewrite. The BEFORE run
# shows the graph the pass takes (rewritten, configured, preoptimized).
# RUN: jitamp opt %s:pads --passes=rewrite,configure,preoptimize | filecheck %s --check-prefix BEFORE
# RUN: jitamp opt %s:pads --passes=rewrite,configure,preoptimize,remove_fold_barriers | filecheck %s
import torch


def pads(x):
    y = torch._C._nn.pad(x, [1, 1], "reflect")
    with torch.autocast("cpu"):
        z = torch._C._nn.pad(x, [2, 2], "reflect")
    return y, z

# BEFORE: [[CR:%[^ ]+]] : int = jitamp::autocast_caller_region()
# BEFORE: [[B1:%[^ ]+]] : Tensor = jitamp::autocast_dependent(%x.1, [[CR]])
# BEFORE-NEXT: %y.1 : Tensor = aten::pad([[B1]],
# BEFORE: , [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# BEFORE: [[B2:%[^ ]+]] : Tensor = jitamp::autocast_dependent(%x.1, [[R]])
# BEFORE-NEXT: %z.1 : Tensor = aten::pad([[B2]],

# CHECK-NOT: jitamp::autocast_dependent
# CHECK: %y.1 : Tensor = aten::pad(%x.1,
# CHECK: jitamp::autocast_enter(
# CHECK-NOT: jitamp::autocast_dependent
# CHECK: %z.1 : Tensor = aten::pad(%x.1,
# CHECK-NEXT: jitamp::autocast_exit(
