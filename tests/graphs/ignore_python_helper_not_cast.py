# A @torch.jit.ignore helper is a Python call (prim::PythonOp, printed ^name):
# jitamp casts nothing for it; its mm runs eagerly under the scope's state.
# RUN: jitamp dump %s:calls_python | filecheck %s
import torch


@torch.jit.ignore
def python_helper(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.mm(a, b)


def calls_python(x, y):
    with torch.autocast("cpu"):
        z = python_helper(x, y)
    return z

# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK-NOT: jitamp::autocast_to
# CHECK-NOT: cuda"
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: %z.1 : Tensor = ^python_helper{{.*}}(%x.1, %y.1){{$}}
# CHECK-NEXT: jitamp::autocast_exit([[G]])
# CHECK-NOT: jitamp::autocast_to
