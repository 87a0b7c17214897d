# keep_loops_out_of_line (configure, its only pass; after the rewrite): a
# prim::Loop with one output used once, which TorchScript's interpreter
# could emit inline at that use, gets two more carried bools (both start
# as a False constant) that each iteration swaps (no op runs), so it is
# never emitted inline, in the optimized plan too. Why: emitted inline at
# the add that reads both y and the loop's result, the add loads y first,
# so the loop's read of y is the use emitted last, which moves y out of its
# register in the first iteration, and the next reads None ("Expected Tensor
# but got None"; runtime/interpreter/can_emit_inline.h, docs/passes.md).
# A loop whose reads nothing after it reads (`alone`) is left as it is. The
# BEFORE run shows the graph the pass takes (rewritten): one carried value.
# RUN: jitamp opt %s:grow --passes=rewrite | filecheck %s --check-prefix BEFORE
# RUN: jitamp opt %s:grow --passes=rewrite,keep_loops_out_of_line | filecheck %s
# RUN: jitamp opt %s:alone --passes=rewrite,keep_loops_out_of_line | filecheck %s --check-prefix ALONE
import torch


def grow(x, n: int):
    y = x + 1
    v = x
    for j in range(n):
        v = v * y
    return y + v


def alone(x, n: int):
    v = x
    for i in range(n):
        v = v * 2
    return v * 3

# BEFORE: [[V:%[^ ]+]] : Tensor = prim::Loop(%n.1, {{%[^ ]+}}, %x.1)
# BEFORE-NEXT: block0(%j : int, [[VI:%[^ ]+]] : Tensor):
# BEFORE-NEXT: [[M:%[^ ]+]] : Tensor = aten::mul([[VI]], %y.1)
# BEFORE-NEXT: -> ({{%[^ ]+}}, [[M]])
# BEFORE-NEXT: aten::add(%y.1, [[V]],
# BEFORE-NOT: : bool = prim::Loop

# CHECK: %y.1 : Tensor = aten::add(%x.1,
# CHECK-NEXT: [[FALSE:%[^ ]+]] : bool = prim::Constant[value=0]()
# CHECK-NEXT: [[V:%[^ ]+]] : Tensor, {{%[^ ]+}} : bool, {{%[^ ]+}} : bool = prim::Loop(%n.1, {{%[^ ]+}}, %x.1, [[FALSE]], [[FALSE]])
# CHECK-NEXT: block0(%j : int, [[VI:%[^ ]+]] : Tensor, [[A:%[^ ]+]] : bool, [[B:%[^ ]+]] : bool):
# CHECK-NEXT: [[M:%[^ ]+]] : Tensor = aten::mul([[VI]], %y.1)
# CHECK-NEXT: -> ({{%[^ ]+}}, [[M]], [[B]], [[A]])
# CHECK-NEXT: aten::add(%y.1, [[V]],

# ALONE: {{%[^ ]+}} : Tensor = prim::Loop(%n.1, {{%[^ ]+}}, %x.1)
# ALONE-NOT: : bool = prim::Loop
