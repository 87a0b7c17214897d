# KeepLoopsOutOfLine (keep_loops_out_of_line.h): TorchScript's interpreter
# would emit the inner loop (one carried value, read once, by the outer
# body's return, which reads v6 first) inline there, and lose v6 in its
# second iteration. The pass gives it two carried bools, swapped each
# iteration; a loop whose reads nothing later reads is left alone.
# RUN: jitamp dump %s:nested | filecheck %s
# RUN: jitamp dump %s:alone | filecheck %s --check-prefix ALONE
import torch


def nested(x0, n: int):
    v3 = x0
    v6 = x0
    for i in range(n):
        v6 = x0 + 1
        for j in range(n):
            v3 = v6 * 2
    return v6


def alone(x, n: int):
    v = x
    for i in range(n):
        v = v * 2
    return v * 3

# CHECK-LABEL: graph(%x0.1 : Tensor,
# CHECK: prim::Loop(%n.1, {{%[^ ]+}}, %x0.1, %x0.1)
# CHECK: [[V6:%v6[^ ]*]] : Tensor = aten::add(%x0.1,
# CHECK-NEXT: [[FALSE:%[^ ]+]] : bool = prim::Constant[value=0]()
# CHECK-NEXT: {{%[^ ]+}} : Tensor, {{%[^ ]+}} : bool, {{%[^ ]+}} : bool = prim::Loop(%n.1, {{%[^ ]+}}, {{%[^ ]+}}, [[FALSE]], [[FALSE]])
# CHECK-NEXT: block0(%j : int, {{%[^ ]+}} : Tensor, [[A:%[^ ]+]] : bool, [[B:%[^ ]+]] : bool):
# CHECK-NEXT: [[V3:%[^ ]+]] : Tensor = aten::mul([[V6]],
# CHECK-NEXT: -> ({{%[^ ]+}}, [[V3]], [[B]], [[A]])

# ALONE-LABEL: graph(%x.1 : Tensor,
# ALONE: {{%[^ ]+}} : Tensor = prim::Loop(%n.1, {{%[^ ]+}}, %x.1)
# ALONE-NOT: : bool = prim::Loop
