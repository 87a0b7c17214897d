# explicit_scopes_for_export (export pipeline; passes/explicit_scopes_for_export.h):
# makes a rewritten, inlined graph the way torch.export takes its autocast
# regions. Each scope's enter op takes the autocast object's device type,
# dtype, enabled and cache flags as inputs (jitamp::autocast_enter.args),
# the object (prim::CreateObject, its SetAttrs, the cache-flag op) is gone,
# and the smart casts are gone: their results are replaced by their inputs,
# because the exported program runs each region under eager's autocast.
# The case shows the mm reading x and w directly and the enter op taking
# the object's values. The dtype check (aten::__is__ / prim::If) stays; the
# export pipeline's constant_propagation folds it later
# (tests/graphs/pipeline_export.py). The BEFORE run shows the graph the
# pass takes (rewritten, then inlined as the pipeline's first step).
# RUN: jitamp opt %s:attend --passes=rewrite,inline | filecheck %s --check-prefix BEFORE
# RUN: jitamp opt %s:attend --passes=rewrite,inline,explicit_scopes_for_export | filecheck %s
import torch


def attend(x, w):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = torch.mm(x, w)
    return y

# BEFORE: [[OBJ:%[^ ]+]] : __torch__.torch.amp.autocast_mode.autocast = prim::CreateObject()
# BEFORE: jitamp::autocast_cache_enabled(
# BEFORE: {{%[^ ]+}} : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter([[OBJ]])
# BEFORE-NEXT: [[W:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%w.1, {{%[^ ]+}}, [[R]])
# BEFORE-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, {{%[^ ]+}}, [[R]])
# BEFORE-NEXT: %y.1 : Tensor = aten::mm([[X]], [[W]])

# CHECK: [[NONE:%[^ ]+]] : NoneType = prim::Constant()
# CHECK-NEXT: [[ON:%[^ ]+]] : bool = prim::Constant[value=1]()
# CHECK: [[CPU:%[^ ]+]] : str = prim::Constant[value="cpu"]()
# CHECK-NOT: prim::CreateObject
# CHECK: [[DT:%[^ ]+]] : int = prim::If(
# CHECK-NOT: prim::SetAttr
# CHECK-NOT: jitamp::autocast_cache_enabled
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, {{%[^ ]+}} : int = jitamp::autocast_enter([[CPU]], [[DT]], [[ON]], [[NONE]])
# CHECK-NEXT: %y.1 : Tensor = aten::mm(%x.1, %w.1)
# CHECK-NEXT: jitamp::autocast_exit([[G]])
# CHECK-NOT: jitamp::autocast_to
