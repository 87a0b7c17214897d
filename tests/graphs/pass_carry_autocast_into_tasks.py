# carry_autocast_into_tasks (rewrite, after keep_autocast_state_across_waits):
# each prim::fork gets a ticket of the caller's autocast state
# (jitamp::autocast_task_state before the fork, passed to the task as one
# more input, jitamp::autocast_task_started after it), and the task opens
# with jitamp::autocast_task_enter of that ticket and ends with
# jitamp::autocast_task_exit (ops/task_ops.cpp). Why: eager's
# torch.jit.fork runs the function at once under the caller's whole autocast
# state, sharing its cast cache; TorchScript's task runs on an inter-op
# worker with only part of that state (never the cache flag or the scope
# depth), and its plan would be made optimized (the ticket's two ops turn
# graph optimizations off while it is made). prim::awaitable, which eager
# and TorchScript both run at its wait on the waiting thread, is left alone.
# The case: a fork and an awaitable in one scope. The BEFORE run shows the
# graph the pass takes (the waits already wrapped): a fork of two inputs, no
# ticket.
# RUN: jitamp opt %s:tasks --passes=repair_value_scopes,use_scope_ops_as_saved,restore_exits_cut_by_raises,record_autocast_cache_flags,lower_autocast_scopes,keep_autocast_state_across_waits | filecheck %s --check-prefix BEFORE
# RUN: jitamp opt %s:tasks --passes=repair_value_scopes,use_scope_ops_as_saved,restore_exits_cut_by_raises,record_autocast_cache_flags,lower_autocast_scopes,keep_autocast_state_across_waits,carry_autocast_into_tasks | filecheck %s
import torch


def tasks(x, y):
    with torch.autocast("cpu"):
        fut = torch.jit.fork(torch.mm, x, y)
        aw = torch.jit._awaitable(torch.mm, y, x)
        z = torch.jit.wait(fut)
    return z + torch.jit._awaitable_wait(aw)

# BEFORE-NOT: jitamp::autocast_task_state
# BEFORE: jitamp::autocast_enter(
# BEFORE-NEXT: %fut.1 : Future[Tensor] = prim::fork_0(%x.1, %y.1)
# BEFORE-NEXT: %aw.1 : Await(Tensor) = prim::awaitable_1(%y.1, %x.1)
# BEFORE-NEXT: jitamp::wait_prepare(%fut.1)
# BEFORE-LABEL: with prim::fork_0 = graph(%x.1 : Tensor,
# BEFORE-NEXT: %y.1 : Tensor):
# BEFORE-NEXT: aten::mm(%x.1, %y.1)
# BEFORE-NOT: jitamp::autocast_task_

# CHECK: jitamp::autocast_enter(
# CHECK-NEXT: [[T:%[^ ]+]] : __torch__.torch.classes.jitamp.TaskTicket = jitamp::autocast_task_state()
# CHECK-NEXT: %fut.1 : Future[Tensor] = prim::fork_0(%x.1, %y.1, [[T]])
# CHECK-NEXT: jitamp::autocast_task_started([[T]])
# CHECK-NEXT: %aw.1 : Await(Tensor) = prim::awaitable_1(%y.1, %x.1)
# CHECK-NEXT: jitamp::wait_prepare(%fut.1)
# CHECK-LABEL: with prim::fork_0 = graph(%x.1 : Tensor,
# CHECK-NEXT: %y.1 : Tensor,
# CHECK-NEXT: %caller_autocast_state : __torch__.torch.classes.jitamp.TaskTicket):
# CHECK-NEXT: [[TG:%[^ ]+]] : __torch__.torch.classes.jitamp.TaskAutocastGuard = jitamp::autocast_task_enter(%caller_autocast_state)
# CHECK-NEXT: [[M:%[^ ]+]] : Tensor = aten::mm(%x.1, %y.1)
# CHECK-NEXT: jitamp::autocast_task_exit([[TG]])
# CHECK-NEXT: return ([[M]])
# The awaitable's subgraph is as it was.
# CHECK-LABEL: with prim::awaitable_1 = graph(%y.1 : Tensor,
# CHECK-NEXT: %x.1 : Tensor):
# CHECK-NEXT: aten::mm(%y.1, %x.1)
# CHECK-NOT: jitamp::autocast_task_
