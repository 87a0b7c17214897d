# record_autocast_cache_flags (rewrite, after restore_exits_cut_by_raises):
# after each scripted __init__ of an autocast object it resolves the
# cache_enabled argument as eager's autocast.__init__ does
# (jitamp::autocast_cache_enabled: None becomes the thread's cache flag) and
# stores the result on that object (prim::SetAttr of _jitamp_cache_enabled),
# for jitamp::autocast_enter to read. Why: TorchScript's scripted __init__
# drops the argument, so without it a scope could not cache as eager does.
#
# The case has two scopes: one whose cache_enabled is an argument (c), one
# that leaves it at its default (None). The BEFORE run shows the graph the
# pass takes: the __init__ calls with nothing after them, no resolve, no
# store (the scopes are still prim::Enter/prim::Exit, lowered later). The
# CHECK run shows each __init__ followed by its own resolve (of c, of the
# None constant) and the store on that same object, before its enter.
# RUN: jitamp opt %s:cached --passes=repair_value_scopes,use_scope_ops_as_saved,restore_exits_cut_by_raises | filecheck %s --check-prefix BEFORE
# RUN: jitamp opt %s:cached --passes=repair_value_scopes,use_scope_ops_as_saved,restore_exits_cut_by_raises,record_autocast_cache_flags | filecheck %s
import torch


def cached(x, y, c: bool):
    with torch.autocast("cpu", cache_enabled=c):
        z = torch.mm(x, y)
    with torch.autocast("cpu"):
        w = torch.mm(z, y)
    return w

# BEFORE: [[AC:%[^ ]+]] : __torch__.torch.amp.autocast_mode.autocast = prim::CreateObject()
# BEFORE-NEXT: prim::CallMethod[name="__init__"]([[AC]], {{.*}}, %c.1)
# BEFORE-NEXT: prim::Enter([[AC]])
# BEFORE: [[AC2:%[^ ]+]] : __torch__.torch.amp.autocast_mode.autocast = prim::CreateObject()
# BEFORE-NEXT: prim::CallMethod[name="__init__"]([[AC2]],
# BEFORE-NEXT: prim::Enter([[AC2]])
# BEFORE-NOT: jitamp::autocast_cache_enabled
# BEFORE-NOT: _jitamp_cache_enabled

# CHECK: [[NONE:%[^ ]+]] : NoneType = prim::Constant()
# CHECK: [[AC:%[^ ]+]] : __torch__.torch.amp.autocast_mode.autocast = prim::CreateObject()
# CHECK-NEXT: prim::CallMethod[name="__init__"]([[AC]], {{.*}}, %c.1)
# CHECK-NEXT: [[FLAG:%[^ ]+]] : bool = jitamp::autocast_cache_enabled(%c.1)
# CHECK-NEXT: prim::SetAttr[name="_jitamp_cache_enabled"]([[AC]], [[FLAG]])
# CHECK-NEXT: prim::Enter([[AC]])
# CHECK: [[AC2:%[^ ]+]] : __torch__.torch.amp.autocast_mode.autocast = prim::CreateObject()
# CHECK-NEXT: prim::CallMethod[name="__init__"]([[AC2]], {{.*}}, [[NONE]])
# CHECK-NEXT: [[FLAG2:%[^ ]+]] : bool = jitamp::autocast_cache_enabled([[NONE]])
# CHECK-NEXT: prim::SetAttr[name="_jitamp_cache_enabled"]([[AC2]], [[FLAG2]])
# CHECK-NEXT: prim::Enter([[AC2]])
# CHECK-NOT: jitamp::autocast_cache_enabled
