# Control flow inside a scope: casts go inside the If branches and Loop bodies
# next to their ops, the enter stays before and the exit after both loops.
# RUN: jitamp dump %s:branchy | filecheck %s
import torch


def branchy(x, y, flag: bool, n: int):
    with torch.autocast("cpu"):
        if flag:
            z = torch.mm(x, y)
        else:
            z = torch.matmul(x, y)
        for i in range(n):
            z = torch.mm(z, y)
        while n > 0:
            z = torch.bmm(z, y)
            n -= 1
    return z

# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# Casts in the If branches and Loop bodies all take the scope's token.
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: prim::If(%flag.1)
# CHECK-NEXT: block0():
# CHECK-NEXT: [[Y1:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%y.1, [[DEV]], [[R]])
# CHECK-NEXT: [[X1:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV]], [[R]])
# CHECK-NEXT: aten::mm([[X1]], [[Y1]])
# CHECK: block1():
# CHECK-NEXT: [[Y2:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%y.1, [[DEV]], [[R]])
# CHECK-NEXT: [[X2:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV]], [[R]])
# CHECK-NEXT: aten::matmul([[X2]], [[Y2]])
# CHECK: prim::Loop(%n.1,
# CHECK-NEXT: block0(%i : int, [[ZF:%[^ ]+]] : Tensor, {{.*}}):
# CHECK-NEXT: [[Y3:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%y.1, [[DEV]], [[R]])
# CHECK-NEXT: [[Z1:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16([[ZF]], [[DEV]], [[R]])
# CHECK-NEXT: aten::mm([[Z1]], [[Y3]])
# CHECK: prim::Loop(
# CHECK-NEXT: block0({{%[^ ]+}} : int, [[ZW:%[^ ]+]] : Tensor,
# CHECK-NEXT: [[Y4:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%y.1, [[DEV]], [[R]])
# CHECK-NEXT: [[Z2:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16([[ZW]], [[DEV]], [[R]])
# CHECK-NEXT: aten::bmm([[Z2]], [[Y4]])
# CHECK-NOT: jitamp::autocast_exit
# CHECK: -> (
# CHECK-NEXT: jitamp::autocast_exit([[G]])
# CHECK-NEXT: return (
