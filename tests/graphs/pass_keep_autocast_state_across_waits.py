# keep_autocast_state_across_waits (rewrite, after lower_autocast_scopes):
# every aten::wait gets jitamp::wait_prepare before it and
# jitamp::wait_resume (reading wait_prepare's TaskAutocastGuard?) after it
# (ops/task_ops.cpp). Why: aten::wait may suspend the interpreter and resume
# the graph on another thread, which would close an open autocast scope
# there instead of on the caller's thread and leave a forked task's state on
# the thread it leaves; wait_prepare decides at run time whether to block
# (as eager's wait does) or move a task's state to the thread it resumes on.
# The case: one wait inside a scope (before its exit) and one after the
# scope's exit (any function may run as a task or be inlined into a caller
# holding a scope open, so it is wrapped too). The BEFORE run shows the
# graph the pass takes: bare waits, nothing around them.
# RUN: jitamp opt %s:waits --passes=repair_value_scopes,use_scope_ops_as_saved,restore_exits_cut_by_raises,record_autocast_cache_flags,lower_autocast_scopes | filecheck %s --check-prefix BEFORE
# RUN: jitamp opt %s:waits --passes=repair_value_scopes,use_scope_ops_as_saved,restore_exits_cut_by_raises,record_autocast_cache_flags,lower_autocast_scopes,keep_autocast_state_across_waits | filecheck %s
import torch


def waits(x, y):
    with torch.autocast("cpu"):
        a = torch.jit.fork(torch.mm, x, y)
        b = torch.jit.fork(torch.mm, y, x)
        z = torch.jit.wait(a)
    return z + torch.jit.wait(b)

# BEFORE-NOT: jitamp::wait_prepare
# BEFORE: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, {{%[^ ]+}} : int = jitamp::autocast_enter(
# BEFORE-NEXT: %a.1 : Future[Tensor] = prim::fork_0(
# BEFORE-NEXT: %b.1 : Future[Tensor] = prim::fork_1(
# BEFORE-NEXT: %z.1 : Tensor = aten::wait(%a.1)
# BEFORE-NEXT: jitamp::autocast_exit([[G]])
# BEFORE-NEXT: {{%[^ ]+}} : Tensor = aten::wait(%b.1)
# BEFORE-NOT: jitamp::wait_resume

# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, {{%[^ ]+}} : int = jitamp::autocast_enter(
# CHECK-NEXT: %a.1 : Future[Tensor] = prim::fork_0(
# CHECK-NEXT: %b.1 : Future[Tensor] = prim::fork_1(
# CHECK-NEXT: [[LA:%[^ ]+]] : __torch__.torch.classes.jitamp.TaskAutocastGuard? = jitamp::wait_prepare(%a.1)
# CHECK-NEXT: %z.1 : Tensor = aten::wait(%a.1)
# CHECK-NEXT: jitamp::wait_resume([[LA]])
# CHECK-NEXT: jitamp::autocast_exit([[G]])
# CHECK-NEXT: [[LB:%[^ ]+]] : __torch__.torch.classes.jitamp.TaskAutocastGuard? = jitamp::wait_prepare(%b.1)
# CHECK-NEXT: [[ZB:%[^ ]+]] : Tensor = aten::wait(%b.1)
# CHECK-NEXT: jitamp::wait_resume([[LB]])
# CHECK-NEXT: aten::add(%z.1, [[ZB]],
