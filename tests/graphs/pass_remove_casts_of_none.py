# remove_casts_of_none (preoptimize, right after inline): a smart cast of a
# `Tensor?` that, once the callee is inlined, is the caller's None goes, and
# the op reads the None itself. A cast of None is None in every autocast
# state; left in, its result is an optional that no later pass sees to be
# None (and CSE once made the casts of layer_norm's weight and bias one
# value, which symbolic autodiff mishandled). The helper is scripted and
# rewritten with jitamp when this file is imported, so that inline splices
# in its own preoptimized graph with its casts, as it does for a caller
# jitamp configures; the caller passes None for its bias. The BEFORE run
# shows the graph the pass takes (rewritten, configured, inlined).
# RUN: jitamp opt %s:caller --passes=rewrite,configure,inline | filecheck %s --check-prefix BEFORE
# RUN: jitamp opt %s:caller --passes=rewrite,configure,inline,remove_casts_of_none | filecheck %s
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
    return helper(x, w, None)

# BEFORE: [[NONE:%[^ ]+]] : NoneType = prim::Constant()
# BEFORE: jitamp::autocast_enter(
# BEFORE-NEXT: [[B:%[^ ]+]] : Tensor? = jitamp::autocast_to_fp16([[NONE]],
# BEFORE-NEXT: [[W:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%w.1,
# BEFORE-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1,
# BEFORE-NEXT: aten::linear([[X]], [[W]], [[B]])

# CHECK: [[NONE:%[^ ]+]] : NoneType = prim::Constant()
# CHECK: jitamp::autocast_enter(
# CHECK-NEXT: [[W:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%w.1,
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1,
# CHECK-NEXT: aten::linear([[X]], [[W]], [[NONE]])
# CHECK-NEXT: jitamp::autocast_exit(
