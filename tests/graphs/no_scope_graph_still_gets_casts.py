# A function with no autocast of its own may run under its caller's: listed
# ops still get their casts, and no enter/exit or cache ops appear.
# RUN: jitamp dump %s:bare | filecheck %s
import torch


def bare(x, y):
    return torch.mm(x, y) + torch.exp(x)

# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK-NOT: jitamp::autocast_enter
# Outside any scope the casts take the caller-region token, made once near
# the top of the graph.
# CHECK-DAG: [[CUDA:%[^ ]+]] : str = prim::Constant[value="cuda"]()
# CHECK-DAG: [[BOTH:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# CHECK-DAG: [[CR:%[^ ]+]] : int = jitamp::autocast_caller_region()
# CHECK: [[Y:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%y.1, [[BOTH]], [[CR]])
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[BOTH]], [[CR]])
# CHECK-NEXT: [[MM:%[^ ]+]] : Tensor = aten::mm([[X]], [[Y]])
# CHECK-NEXT: [[XE:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%x.1, [[CUDA]], [[CR]])
# CHECK-NEXT: [[E:%[^ ]+]] : Tensor = aten::exp([[XE]])
# CHECK-NEXT: aten::add([[MM]], [[E]],
# CHECK-NOT: jitamp::autocast_exit
# CHECK-NOT: jitamp::autocast_cache_enabled
# CHECK-NOT: AutocastGuard
