# lower_autocast_scopes (rewrite, after record_autocast_cache_flags): each
# prim::Enter / prim::Exit on an autocast object becomes
# `%guard, %region = jitamp::autocast_enter(%autocast)` /
# `jitamp::autocast_exit(%guard)`, which set eager's thread-local autocast
# state as autocast.__enter__ / __exit__ do. Why: TorchScript's scripted
# __enter__/__exit__ change no thread state (they are mere markers), so
# without it the ops of a scope would not dispatch as in eager.
#
# The case nests a disabled scope (bound with `as ac`) in an enabled one.
# The BEFORE run shows the graph the pass takes: the scopes as prim::Enter
# and prim::Exit, the cache flags already recorded. The CHECK run shows
# each enter on its own object, each exit on its own guard, innermost
# first, and no prim::Enter/prim::Exit left.
# RUN: jitamp opt %s:nested --passes=repair_value_scopes,use_scope_ops_as_saved,restore_exits_cut_by_raises,record_autocast_cache_flags | filecheck %s --check-prefix BEFORE
# RUN: jitamp opt %s:nested --passes=repair_value_scopes,use_scope_ops_as_saved,restore_exits_cut_by_raises,record_autocast_cache_flags,lower_autocast_scopes | filecheck %s
import torch


def nested(x, y):
    with torch.autocast("cpu"):
        z = torch.mm(x, y)
        with torch.autocast("cpu", enabled=False) as ac:
            w = torch.mm(z, y)
    return w

# BEFORE: [[AC:%[^ ]+]] : __torch__.torch.amp.autocast_mode.autocast = prim::CreateObject()
# BEFORE: prim::SetAttr[name="_jitamp_cache_enabled"]([[AC]],
# BEFORE-NEXT: prim::Enter([[AC]])
# BEFORE: [[AC2:%[^ ]+]] : __torch__.torch.amp.autocast_mode.autocast = prim::CreateObject()
# BEFORE: prim::SetAttr[name="_jitamp_cache_enabled"]([[AC2]],
# BEFORE-NEXT: %ac : __torch__.torch.amp.autocast_mode.autocast = prim::Enter([[AC2]])
# BEFORE-NEXT: aten::mm(
# BEFORE-NEXT: prim::Exit([[AC2]])
# BEFORE-NEXT: prim::Exit([[AC]])
# BEFORE-NOT: jitamp::autocast_enter
# BEFORE-NOT: jitamp::autocast_exit

# CHECK-NOT: prim::Enter
# CHECK: [[AC:%[^ ]+]] : __torch__.torch.amp.autocast_mode.autocast = prim::CreateObject()
# CHECK: prim::SetAttr[name="_jitamp_cache_enabled"]([[AC]],
# CHECK-NEXT: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, {{%[^ ]+}} : int = jitamp::autocast_enter([[AC]])
# CHECK-NEXT: [[Z:%[^ ]+]] : Tensor = aten::mm(%x.1, %y.1)
# CHECK-NEXT: [[AC2:%[^ ]+]] : __torch__.torch.amp.autocast_mode.autocast = prim::CreateObject()
# CHECK: prim::SetAttr[name="_jitamp_cache_enabled"]([[AC2]],
# CHECK-NEXT: [[G2:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, {{%[^ ]+}} : int = jitamp::autocast_enter([[AC2]])
# CHECK-NEXT: aten::mm([[Z]], %y.1)
# CHECK-NEXT: jitamp::autocast_exit([[G2]])
# CHECK-NEXT: jitamp::autocast_exit([[G]])
# CHECK-NOT: prim::Enter
# CHECK-NOT: prim::Exit
