# The export pipeline (ExportGraph, pipeline/pipeline.cpp; docs/exporting.md):
# what jitamp.export does to a rewritten copy's forward before converting
# it to a torch.export program (inline, explicit_scopes_for_export,
# constant_propagation, eliminate_dead_code). Its characteristic result:
# the called helper is inlined, the smart casts are gone
# (the program runs each region under eager's autocast), and each scope's
# enter takes its device type, dtype, enabled and cache flags as
# constants: the autocast object, its dtype check (aten::__is__ /
# prim::If) and the cache-flag op are folded away.
# RUN: jitamp opt %s:attend --passes=rewrite,export | filecheck %s
import torch


@torch.jit.script
def project(x, w):
    return torch.mm(x, w)


def attend(x, w):
    with torch.autocast("cpu", dtype=torch.bfloat16, cache_enabled=False):
        y = project(x, w)
        z = torch.mm(y, w)
    return z

# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK-NOT: prim::CreateObject
# CHECK-NOT: prim::If
# CHECK-NOT: prim::CallFunction
# CHECK-DAG: [[CPU:%[^ ]+]] : str = prim::Constant[value="cpu"]()
# CHECK-DAG: [[BF16:%[^ ]+]] : int = prim::Constant[value=15]()
# CHECK-DAG: [[ON:%[^ ]+]] : bool = prim::Constant[value=1]()
# CHECK-DAG: [[OFF:%[^ ]+]] : bool = prim::Constant[value=0]()
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, {{%[^ ]+}} : int = jitamp::autocast_enter([[CPU]], [[BF16]], [[ON]], [[OFF]])
# CHECK-NEXT: [[Y:%[^ ]+]] : Tensor = aten::mm(%x.1, %w.1)
# CHECK-NEXT: [[Z:%[^ ]+]] : Tensor = aten::mm([[Y]], %w.1)
# CHECK-NEXT: jitamp::autocast_exit([[G]])
# CHECK-NEXT: return ([[Z]])
