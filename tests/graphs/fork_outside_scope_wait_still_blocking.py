# With no scope in sight, aten::wait still becomes jitamp::wait (a callee may
# be inlined into a caller holding a scope open) and the fork still gets casts.
# RUN: jitamp dump %s:forked_plain | filecheck %s
import torch


def forked_plain(x, y):
    fut = torch.jit.fork(torch.mm, x, y)
    return torch.jit.wait(fut)

# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK-NOT: jitamp::autocast_enter
# The outer graph casts nothing itself: no caller-region node there.
# CHECK: %fut.1 : Future[Tensor] = prim::fork_0(%x.1, %y.1)
# CHECK-NEXT: [[Z:%[^ ]+]] : Tensor = jitamp::wait(%fut.1)
# CHECK-NEXT: return ([[Z]])
# CHECK-LABEL: with prim::fork_0 = graph(%x.1 : Tensor,
# CHECK-NOT: jitamp::autocast_enter
# CHECK-DAG: [[CR:%[^ ]+]] : int = jitamp::autocast_caller_region()
# CHECK-DAG: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# CHECK: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV]], [[CR]])
# CHECK-NEXT: [[Y:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%y.1, [[DEV]], [[CR]])
# CHECK-NEXT: aten::mm([[X]], [[Y]])
# CHECK-NOT: aten::wait
# CHECK-NOT: jitamp::autocast_exit
