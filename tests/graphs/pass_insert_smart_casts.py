# insert_smart_casts (rewrite, the last pass, after carry_autocast_into_tasks):
# before every op that eager autocast handles, it inserts the smart cast of
# that op's policy on its tensor inputs (jitamp::autocast_to_fp16 /
# autocast_to_fp32 / autocast_promote, each deciding at run time), each
# taking its region's token: the innermost open scope's, or
# jitamp::autocast_caller_region() outside any scope. Why: the dispatcher
# casts at run time, but what reads the IR (autodiff, fusers, freezing's
# fold of weight casts, inlining callers) must see the casts, and tying
# them to regions keeps CSE from merging casts across scopes.
#
# The case has an mm outside any scope, an mm and a cat (promote, on a
# Tensor[] input) and an exp (float32 on CUDA) in a scope, and an mm in a
# nested disabled scope. The BEFORE run shows the graph the pass takes:
# scopes lowered, no casts. The CHECK run shows the casts, the outer mm's
# on the caller region's token, the others on their own scope's token.
# RUN: jitamp opt %s:mixed --passes=repair_value_scopes,use_scope_ops_as_saved,restore_exits_cut_by_raises,record_autocast_cache_flags,lower_autocast_scopes,keep_autocast_state_across_waits,carry_autocast_into_tasks | filecheck %s --check-prefix BEFORE
# RUN: jitamp opt %s:mixed --passes=repair_value_scopes,use_scope_ops_as_saved,restore_exits_cut_by_raises,record_autocast_cache_flags,lower_autocast_scopes,keep_autocast_state_across_waits,carry_autocast_into_tasks,insert_smart_casts | filecheck %s
import torch


def mixed(x, y, b):
    a = torch.mm(x, y)
    with torch.autocast("cpu"):
        z = torch.mm(a, y)
        s = torch.cat([z, b])
        e = torch.exp(s)
        with torch.autocast("cpu", enabled=False):
            w = torch.mm(z, y)
    return e, w

# BEFORE: %a.1 : Tensor = aten::mm(%x.1, %y.1)
# BEFORE: jitamp::autocast_enter(
# BEFORE-NEXT: %z.1 : Tensor = aten::mm(%a.1, %y.1)
# BEFORE-NOT: jitamp::autocast_to_fp16
# BEFORE-NOT: jitamp::autocast_to_fp32
# BEFORE-NOT: jitamp::autocast_promote
# BEFORE-NOT: jitamp::autocast_caller_region

# CHECK-DAG: [[CUDA:%[^ ]+]] : str = prim::Constant[value="cuda"]()
# CHECK-DAG: [[CPU:%[^ ]+]] : str = prim::Constant[value="cpu"]()
# CHECK-DAG: [[CR:%[^ ]+]] : int = jitamp::autocast_caller_region()
# CHECK-DAG: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# CHECK: [[Y0:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%y.1, [[DEV]], [[CR]])
# CHECK-NEXT: [[X0:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV]], [[CR]])
# CHECK-NEXT: %a.1 : Tensor = aten::mm([[X0]], [[Y0]])
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: [[Y1:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%y.1, [[DEV]], [[R]])
# CHECK-NEXT: [[A1:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%a.1, [[DEV]], [[R]])
# CHECK-NEXT: %z.1 : Tensor = aten::mm([[A1]], [[Y1]])
# CHECK-NEXT: [[L:%[^ ]+]] : Tensor[] = prim::ListConstruct(%z.1, %b.1)
# CHECK-NEXT: [[LP:%[^ ]+]] : Tensor[] = jitamp::autocast_promote([[L]], [[CPU]], [[R]])
# CHECK-NEXT: %s.1 : Tensor = aten::cat([[LP]],
# CHECK-NEXT: [[S32:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%s.1, [[CUDA]], [[R]])
# CHECK-NEXT: %e.1 : Tensor = aten::exp([[S32]])
# CHECK: [[G2:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R2:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: [[Y2:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%y.1, [[DEV]], [[R2]])
# CHECK-NEXT: [[Z2:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%z.1, [[DEV]], [[R2]])
# CHECK-NEXT: %w.1 : Tensor = aten::mm([[Z2]], [[Y2]])
# CHECK-NEXT: jitamp::autocast_exit([[G2]])
# CHECK-NEXT: jitamp::autocast_exit([[G]])
