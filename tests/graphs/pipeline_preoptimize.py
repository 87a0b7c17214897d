# The preoptimize pipeline: TorchScript's preoptimizeGraph (the copy of a
# function's graph that every executor starts from, and that callers
# inline), the same passes in the same order, with jitamp's two changes.
# Inline splices in the callees: the autocast object's __init__ (its
# `dtype is None` test then folds away in constant propagation) and the
# helper's own preoptimized graph, scripted and rewritten with jitamp when
# this file is imported. remove_casts_of_none drops the helper's cast of
# the bias the caller passes None for; peephole_keeping_transposes runs the
# peephole pass but keeps x.t().t() (eager casts the view apart from its
# base); constant pooling leaves one "cpu,cuda" and one None for both
# scopes. The BEFORE run shows the graph the pipeline takes (rewritten and
# configured).
# RUN: jitamp opt %s:caller --passes=rewrite,configure | filecheck %s --check-prefix BEFORE
# RUN: jitamp opt %s:caller --passes=rewrite,configure,preoptimize | filecheck %s
from typing import Optional

import torch
import torch.nn.functional as F

import jitamp


def helper(x, w, b: Optional[torch.Tensor]):
    with torch.autocast("cpu"):
        return F.linear(x, w, b)


helper = torch.jit.script(helper)
jitamp.rewrite(helper)


def caller(x, w):
    with torch.autocast("cpu"):
        y = torch.mm(x, x.t().t())
    return helper(y, w, None)

# BEFORE: prim::CallMethod[name="__init__"](
# BEFORE: aten::t(%x.1)
# BEFORE: prim::CallFunction(

# CHECK-NOT: prim::Call
# CHECK-DAG: [[CPU:%[^ ]+]] : str = prim::Constant[value="cpu"]()
# CHECK-DAG: [[NONE:%[^ ]+]] : NoneType = prim::Constant()
# CHECK-DAG: [[BOTH:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# CHECK-NOT: prim::If
# CHECK: aten::get_autocast_dtype([[CPU]])
# CHECK-NOT: prim::If
# CHECK: , [[R1:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: [[T1:%[^ ]+]] : Tensor = aten::t(%x.1)
# CHECK-NEXT: [[T2:%[^ ]+]] : Tensor = aten::t([[T1]])
# CHECK-NEXT: [[TC:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16([[T2]], [[BOTH]], [[R1]])
# CHECK-NEXT: [[XC:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[BOTH]], [[R1]])
# CHECK-NEXT: %y.1 : Tensor = aten::mm([[XC]], [[TC]])
# CHECK-NEXT: jitamp::autocast_exit(
# CHECK-NOT: prim::Call
# CHECK: aten::get_autocast_dtype([[CPU]])
# CHECK: , [[R2:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: [[WC:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%w.1, [[BOTH]], [[R2]])
# CHECK-NEXT: [[YC:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%y.1, [[BOTH]], [[R2]])
# CHECK-NEXT: aten::linear([[YC]], [[WC]], [[NONE]])
# CHECK-NEXT: jitamp::autocast_exit(
