# The rewrite pipeline (RewriteAutocast's passes, pipeline/pipeline.cpp:
# repair_value_scopes, use_scope_ops_as_saved, restore_exits_cut_by_raises,
# record_autocast_cache_flags, lower_autocast_scopes,
# keep_autocast_state_across_waits, carry_autocast_into_tasks,
# insert_smart_casts): what jitamp does to every scripted graph, making a
# scripted `with torch.autocast(...)` act as eager's. Its characteristic
# result: the scope's cache flag is resolved after the object's __init__;
# prim::Enter/prim::Exit become jitamp::autocast_enter/autocast_exit; a
# fork in the scope passes the autocast state to its task
# (autocast_task_state, autocast_task_started; the forked subgraph enters
# it with autocast_task_enter) and the wait is wrapped in wait_prepare /
# wait_resume; every autocast op gets its smart casts, on the caller
# region's token outside the scope (the mm before it) and on the scope's
# token inside (the exp, float32 on CUDA), the forked mm's on its own
# subgraph's caller region.
# RUN: jitamp opt %s:step --passes=rewrite | filecheck %s
import torch


def step(x, w):
    h = torch.mm(x, w)
    with torch.autocast("cpu"):
        fut = torch.jit.fork(torch.mm, h, w)
        y = torch.jit.wait(fut)
        e = torch.exp(y)
    return e

# CHECK-NOT: prim::Enter
# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK-DAG: [[CUDA:%[^ ]+]] : str = prim::Constant[value="cuda"]()
# CHECK-DAG: [[CR:%[^ ]+]] : int = jitamp::autocast_caller_region()
# CHECK-DAG: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# CHECK: [[W0:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%w.1, [[DEV]], [[CR]])
# CHECK-NEXT: [[X0:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV]], [[CR]])
# CHECK-NEXT: %h.1 : Tensor = aten::mm([[X0]], [[W0]])
# CHECK-NEXT: [[AC:%[^ ]+]] : __torch__.torch.amp.autocast_mode.autocast = prim::CreateObject()
# CHECK-NEXT: prim::CallMethod[name="__init__"]([[AC]],
# CHECK-NEXT: [[FLAG:%[^ ]+]] : bool = jitamp::autocast_cache_enabled(
# CHECK-NEXT: prim::SetAttr[name="_jitamp_cache_enabled"]([[AC]], [[FLAG]])
# CHECK-NEXT: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter([[AC]])
# CHECK-NEXT: [[S:%[^ ]+]] : __torch__.torch.classes.jitamp.TaskTicket = jitamp::autocast_task_state()
# CHECK-NEXT: %fut.1 : Future[Tensor] = prim::fork_0(%h.1, %w.1, [[S]])
# CHECK-NEXT: jitamp::autocast_task_started([[S]])
# CHECK-NEXT: [[L:%[^ ]+]] : __torch__.torch.classes.jitamp.TaskAutocastGuard? = jitamp::wait_prepare(%fut.1)
# CHECK-NEXT: %y.1 : Tensor = aten::wait(%fut.1)
# CHECK-NEXT: jitamp::wait_resume([[L]])
# CHECK-NEXT: [[Y32:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%y.1, [[CUDA]], [[R]])
# CHECK-NEXT: %e.1 : Tensor = aten::exp([[Y32]])
# CHECK-NEXT: jitamp::autocast_exit([[G]])
# CHECK-NEXT: return (%e.1)
# CHECK-LABEL: with prim::fork_0 = graph(%h.1 : Tensor,
# CHECK-DAG: [[TCR:%[^ ]+]] : int = jitamp::autocast_caller_region()
# CHECK-DAG: [[TDEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# CHECK-DAG: [[TG:%[^ ]+]] : __torch__.torch.classes.jitamp.TaskAutocastGuard = jitamp::autocast_task_enter(%caller_autocast_state)
# CHECK: [[TW:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%w.1, [[TDEV]], [[TCR]])
# CHECK-NEXT: [[TH:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%h.1, [[TDEV]], [[TCR]])
# CHECK-NEXT: [[M:%[^ ]+]] : Tensor = aten::mm([[TH]], [[TW]])
# CHECK-NEXT: jitamp::autocast_task_exit([[TG]])
# CHECK-NEXT: return ([[M]])
# CHECK-NOT: prim::Enter
# CHECK-NOT: prim::Exit
