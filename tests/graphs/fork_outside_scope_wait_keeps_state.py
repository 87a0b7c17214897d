# With no scope in sight, aten::wait is still wrapped in wait_prepare and
# wait_resume (a callee may be inlined into a caller holding a scope open, or
# run as a forked task), the fork still gets casts,
# and the task adopts the caller's autocast state (the caller may be in an
# eager autocast region).
# RUN: jitamp dump %s:forked_plain | filecheck %s
import torch


def forked_plain(x, y):
    fut = torch.jit.fork(torch.mm, x, y)
    return torch.jit.wait(fut)

# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK-NOT: jitamp::autocast_enter
# The outer graph casts nothing itself: no caller-region node there.
# CHECK: [[S:%[^ ]+]] : __torch__.torch.classes.jitamp.TaskTicket = jitamp::autocast_task_state()
# CHECK-NEXT: %fut.1 : Future[Tensor] = prim::fork_0(%x.1, %y.1, [[S]])
# The fork's plan is made unoptimized; then the thread's flag is restored.
# CHECK-NEXT: jitamp::autocast_task_started([[S]])
# CHECK-NEXT: [[L:%[^ ]+]] : __torch__.torch.classes.jitamp.TaskAutocastGuard? = jitamp::wait_prepare(%fut.1)
# CHECK-NEXT: [[Z:%[^ ]+]] : Tensor = aten::wait(%fut.1)
# CHECK-NEXT: jitamp::wait_resume([[L]])
# CHECK-NEXT: return ([[Z]])
# CHECK-LABEL: with prim::fork_0 = graph(%x.1 : Tensor,
# CHECK-NEXT: %y.1 : Tensor,
# CHECK-NEXT: %caller_autocast_state : __torch__.torch.classes.jitamp.TaskTicket):
# CHECK-NOT: jitamp::autocast_enter
# CHECK-DAG: [[CR:%[^ ]+]] : int = jitamp::autocast_caller_region()
# CHECK-DAG: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# CHECK-DAG: [[TG:%[^ ]+]] : __torch__.torch.classes.jitamp.TaskAutocastGuard = jitamp::autocast_task_enter(%caller_autocast_state)
# CHECK: [[Y:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%y.1, [[DEV]], [[CR]])
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV]], [[CR]])
# CHECK-NEXT: [[M:%[^ ]+]] : Tensor = aten::mm([[X]], [[Y]])
# CHECK-NEXT: jitamp::autocast_task_exit([[TG]])
# CHECK-NEXT: return ([[M]])
# CHECK-NOT: jitamp::autocast_exit
