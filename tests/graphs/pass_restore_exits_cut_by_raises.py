# restore_exits_cut_by_raises (rewrite, after use_scope_ops_as_saved): each
# jitamp::autocast_enter whose guard (its first output) has no use gets a
# jitamp::autocast_exit of that guard at the end of its block, innermost
# scope first. Why: compiling saved code, TorchScript's exit transform drops
# what follows an unconditional raise in a function with an early return
# elsewhere, so a scope whose block raises loads without its exit; the
# unused guard is dropped as soon as the enter has run, and its destructor
# puts the caller's state back, so the scope's ops before the raise run
# outside it (fuzz seed 112903, index 40640;
# tests/regressions/jitamp_saved_scope_exit_cut_by_a_raise.py). The exit
# put back after the raise never runs; it keeps the guard alive until the
# raise unwinds the frame, as eager's __exit__ does.
#
# The target, `saved`, is Prog scripted with jitamp, frozen by
# torch.jit.freeze alone (which inlines `h1` into forward), saved and loaded
# again (a zero-arg factory returning the ScriptModule, which `jitamp opt`
# takes as it is): a .py case, since the input only arises from loading.
# Before saving, the frozen graph has both exits after the raise; loaded,
# it has neither. The BEFORE run shows the graph the pass takes: two enters,
# the raise last in their block, no exit. The CHECK run shows the two exits
# after the raise, the inner scope's first.
# RUN: jitamp opt %s:saved --passes=repair_value_scopes,use_scope_ops_as_saved | filecheck %s --check-prefix BEFORE
# RUN: jitamp opt %s:saved --passes=repair_value_scopes,use_scope_ops_as_saved,restore_exits_cut_by_raises | filecheck %s
import io
from typing import List

import torch
from torch import Tensor

import jitamp


def h1(a: Tensor, b: Tensor, sink: List[Tensor]) -> Tensor:
    with torch.autocast("cpu", dtype=torch.float32):
        v = torch.mm(a, b)
        sink.append(v)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            sink.append(torch.mm(v, b))
            raise AssertionError("always")
    return v


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(4, 4))

    def forward(self, x: Tensor, flag: bool) -> List[Tensor]:
        sink: List[Tensor] = []
        if not flag:
            return sink
        sink.append(h1(self.w, x, sink))
        return sink


def saved():
    with jitamp.enable():
        scripted = torch.jit.script(Prog())
    plain_freeze = getattr(torch.jit.freeze, "__wrapped__", torch.jit.freeze)
    frozen = plain_freeze(scripted.eval())
    buffer = io.BytesIO()
    torch.jit.save(frozen, buffer)
    buffer.seek(0)
    return torch.jit.load(buffer)

# BEFORE-NOT: jitamp::autocast_exit
# BEFORE: {{%[^ ]+}} : __torch__.torch.classes.jitamp.AutocastGuard, {{%[^ ]+}} : int = jitamp::autocast_enter(
# BEFORE: %v.1 : Tensor = aten::mm(
# BEFORE: {{%[^ ]+}} : __torch__.torch.classes.jitamp.AutocastGuard, {{%[^ ]+}} : int = jitamp::autocast_enter(
# BEFORE: aten::append(%sink.1,
# BEFORE-NEXT: prim::RaiseException(
# BEFORE-NEXT: -> ()
# BEFORE-NOT: jitamp::autocast_exit

# CHECK: [[G1:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, {{%[^ ]+}} : int = jitamp::autocast_enter(
# CHECK: %v.1 : Tensor = aten::mm(
# CHECK: [[G2:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, {{%[^ ]+}} : int = jitamp::autocast_enter(
# CHECK: aten::append(%sink.1,
# CHECK-NEXT: prim::RaiseException(
# CHECK-NEXT: jitamp::autocast_exit([[G2]])
# CHECK-NEXT: jitamp::autocast_exit([[G1]])
# CHECK-NEXT: -> ()
