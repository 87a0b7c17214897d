# use_scope_ops_as_saved (rewrite, after repair_value_scopes): the scope ops
# of jitamp's plans (jitamp::autocast_enter_in_plan,
# autocast_caller_region_in_plan, which run) become the ops as saved
# (jitamp::autocast_enter, autocast_caller_region, which raise outside
# jitamp's plans), same inputs, outputs and attributes. What it answers:
# torch.jit.freeze inlines the graphs of the profiling executor's plans,
# which end with use_scope_ops_of_plans, so a frozen graph holds the plans'
# kinds; rewritten (and saved) as they are, a copy that jitamp never
# configured (Module::clone, C++ torch::jit::freeze) would run them with
# TorchScript's defaults instead of raising (docs/saving-and-loading.md,
# "Functions jitamp did not configure"). Not a TorchScript bug: a
# consequence of freeze's inlining.
#
# The target, `frozen`, is that graph: Net scripted with jitamp's profiling
# executor and frozen by torch.jit.freeze alone (a zero-arg factory returns
# the ScriptModule, which `jitamp opt` takes as it is); freezing inlined
# `scaled`'s profiling plan (an mm outside its scope, in the caller's region,
# and one in a scope entered from the object's values). The BEFORE run shows
# the graph the pass takes (after repair_value_scopes, which leaves it as
# is): both plan kinds. The CHECK run shows the saved kinds in their places,
# the casts still reading their region tokens.
# RUN: jitamp opt %s:frozen --passes=repair_value_scopes | filecheck %s --check-prefix BEFORE
# RUN: jitamp opt %s:frozen --passes=repair_value_scopes,use_scope_ops_as_saved | filecheck %s
import torch

import jitamp


def scaled(x, w):
    y = torch.mm(x, w)
    with torch.autocast("cpu"):
        return torch.mm(y, w)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, x):
        return scaled(x, self.w).relu()


def frozen():
    with jitamp.enable(profiling_executor=True):
        scripted = torch.jit.script(Net())
    plain_freeze = getattr(torch.jit.freeze, "__wrapped__", torch.jit.freeze)
    return plain_freeze(scripted.eval())

# BEFORE: [[REGION:%[^ ]+]] : int = jitamp::autocast_caller_region_in_plan()
# BEFORE-NEXT: jitamp::autocast_to_fp16(%self.w, {{%[^ ]+}}, [[REGION]])
# BEFORE: [[GUARD:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[SCOPE:%[^ ]+]] : int = jitamp::autocast_enter_in_plan(
# BEFORE-NEXT: jitamp::autocast_to_fp16(%self.w, {{%[^ ]+}}, [[SCOPE]])
# BEFORE: jitamp::autocast_exit([[GUARD]])
# BEFORE-NOT: jitamp::autocast_enter(
# BEFORE-NOT: jitamp::autocast_caller_region()

# CHECK-NOT: _in_plan
# CHECK: [[REGION:%[^ ]+]] : int = jitamp::autocast_caller_region()
# CHECK-NEXT: jitamp::autocast_to_fp16(%self.w, {{%[^ ]+}}, [[REGION]])
# CHECK-NEXT: jitamp::autocast_to_fp16(%x.1, {{%[^ ]+}}, [[REGION]])
# CHECK-NEXT: [[Y:%[^ ]+]] : Tensor = aten::mm(
# CHECK-NEXT: [[DTYPE:%[^ ]+]] : int = aten::get_autocast_dtype(
# CHECK-NEXT: [[GUARD:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[SCOPE:%[^ ]+]] : int = jitamp::autocast_enter({{%[^ ]+}}, [[DTYPE]], {{%[^ ]+}}, {{%[^ ]+}})
# CHECK-NEXT: jitamp::autocast_to_fp16(%self.w, {{%[^ ]+}}, [[SCOPE]])
# CHECK-NEXT: jitamp::autocast_to_fp16([[Y]], {{%[^ ]+}}, [[SCOPE]])
# CHECK-NEXT: aten::mm(
# CHECK-NEXT: jitamp::autocast_exit([[GUARD]])
# CHECK-NOT: _in_plan
