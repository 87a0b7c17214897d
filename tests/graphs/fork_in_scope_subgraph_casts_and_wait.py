# torch.jit.fork in a scope: the forked subgraph gets its own casts, and
# aten::wait, before the exit, is wrapped in wait_prepare (which blocks here:
# a scope is open) and wait_resume.
# RUN: jitamp dump %s:forked | filecheck %s
import torch


def forked(x, y):
    with torch.autocast("cpu"):
        fut = torch.jit.fork(torch.mm, x, y)
        z = torch.jit.wait(fut)
    return z

# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: [[S:%[^ ]+]] : __torch__.torch.classes.jitamp.TaskTicket = jitamp::autocast_task_state()
# CHECK-NEXT: %fut.1 : Future[Tensor] = prim::fork_0(%x.1, %y.1, [[S]])
# The fork's plan is made unoptimized; then the thread's flag is restored.
# CHECK-NEXT: jitamp::autocast_task_started([[S]])
# CHECK-NEXT: [[L:%[^ ]+]] : __torch__.torch.classes.jitamp.TaskAutocastGuard? = jitamp::wait_prepare(%fut.1)
# CHECK-NEXT: [[Z:%[^ ]+]] : Tensor = aten::wait(%fut.1)
# CHECK-NEXT: jitamp::wait_resume([[L]])
# CHECK-NEXT: jitamp::autocast_exit([[G]])
# CHECK-NEXT: return ([[Z]])
# The forked subgraph is a graph of its own with no scope in it: its casts
# take the token of its own caller-region node (the fork runs under the
# autocast state it was forked in), not the scope's token.
# CHECK-LABEL: with prim::fork_0 = graph(%x.1 : Tensor,
# CHECK-DAG: [[CR:%[^ ]+]] : int = jitamp::autocast_caller_region()
# CHECK-DAG: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# CHECK-DAG: [[TG:%[^ ]+]] : __torch__.torch.classes.jitamp.TaskAutocastGuard = jitamp::autocast_task_enter(%caller_autocast_state)
# CHECK: [[Y:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%y.1, [[DEV]], [[CR]])
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV]], [[CR]])
# CHECK-NEXT: [[M:%[^ ]+]] : Tensor = aten::mm([[X]], [[Y]])
# CHECK-NEXT: jitamp::autocast_task_exit([[TG]])
# CHECK-NEXT: return ([[M]])
