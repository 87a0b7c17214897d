# A module's @torch.jit.export method is rewritten like forward: --all-methods
# shows both, each with its own scope lowered and its own casts.
# RUN: jitamp dump %s:WithExport --all-methods | filecheck %s
# RUN: jitamp dump %s:WithExport --method project | filecheck %s --check-prefix ONE
import torch
import torch.nn as nn


class WithExport(nn.Module):
    def forward(self, x):
        with torch.autocast("cpu"):
            y = torch.mm(x, x)
        return y

    @torch.jit.export
    def project(self, x, w):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            p = torch.matmul(x, w)
        return p

# CHECK: # method forward
# CHECK-NEXT: graph(%self : {{.*}}WithExport,
# CHECK: [[DEV1:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# CHECK: [[G1:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R1:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: [[B:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV1]], [[R1]])
# CHECK-NEXT: [[A:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV1]], [[R1]])
# CHECK-NEXT: %y.1 : Tensor = aten::mm([[A]], [[B]])
# CHECK-NEXT: jitamp::autocast_exit([[G1]])
# CHECK: # method project
# CHECK-NEXT: graph(%self : {{.*}}WithExport,
# CHECK: [[DEV2:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# CHECK: [[G2:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R2:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: [[W:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%w.1, [[DEV2]], [[R2]])
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV2]], [[R2]])
# CHECK-NEXT: %p.1 : Tensor = aten::matmul([[X]], [[W]])
# CHECK-NEXT: jitamp::autocast_exit([[G2]])
# CHECK-NOT: prim::Enter

# ONE-NOT: # method
# ONE: graph(%self : {{.*}}WithExport,
# ONE-NEXT: %x.1 : Tensor,
# ONE-NEXT: %w.1 : Tensor):
# ONE: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# ONE: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# ONE-NEXT: [[W:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%w.1, [[DEV]], [[R]])
# ONE-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV]], [[R]])
# ONE-NEXT: aten::matmul([[X]], [[W]])
# ONE-NEXT: jitamp::autocast_exit([[G]])
