# Nested scopes: two enters, exits in reverse order, each exit taking the
# guard of its own enter; ops in each region get their casts.
# RUN: jitamp dump %s:nested | filecheck %s
import torch


def nested(x, y):
    with torch.autocast("cpu"):
        a = torch.mm(x, y)
        with torch.autocast("cpu", enabled=False):
            b = torch.mm(a, y)
        c = torch.mm(b, y)
    return c

# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# CHECK: [[OUTER:%[^ ]+]] : __torch__.torch.amp.autocast_mode.autocast = prim::CreateObject()
# Outer region: casts take the outer token.
# CHECK: [[G1:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R1:%[^ ]+]] : int = jitamp::autocast_enter([[OUTER]])
# CHECK-NEXT: [[Y1:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%y.1, [[DEV]], [[R1]])
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV]], [[R1]])
# CHECK-NEXT: %a.1 : Tensor = aten::mm([[X]], [[Y1]])
# CHECK: [[INNER:%[^ ]+]] : __torch__.torch.amp.autocast_mode.autocast = prim::CreateObject()
# Inner region: its own token, for the casts up to its exit.
# CHECK: [[G2:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R2:%[^ ]+]] : int = jitamp::autocast_enter([[INNER]])
# CHECK-NEXT: [[Y:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%y.1, [[DEV]], [[R2]])
# CHECK-NEXT: [[A:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%a.1, [[DEV]], [[R2]])
# CHECK-NEXT: %b.1 : Tensor = aten::mm([[A]], [[Y]])
# CHECK-NEXT: jitamp::autocast_exit([[G2]])
# Back in the outer region after the inner exit: the outer token again.
# CHECK-NEXT: [[Y2:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%y.1, [[DEV]], [[R1]])
# CHECK-NEXT: [[B:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%b.1, [[DEV]], [[R1]])
# CHECK-NEXT: %c.1 : Tensor = aten::mm([[B]], [[Y2]])
# CHECK-NEXT: jitamp::autocast_exit([[G1]])
# CHECK-NEXT: return (%c.1)
# CHECK-NOT: prim::Enter
# CHECK-NOT: prim::Exit
