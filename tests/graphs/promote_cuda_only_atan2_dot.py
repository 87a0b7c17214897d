# promote on CUDA only, two-tensor form: atan2 and dot each get their own
# autocast_promote(a, b, "cuda") with two outputs.
# RUN: jitamp dump %s:angle_and_dot | filecheck %s
import torch


def angle_and_dot(a, b, u, v):
    with torch.autocast("cpu"):
        t = torch.atan2(a, b)
        d = torch.dot(u, v)
    return t, d

# CHECK-LABEL: graph(%a.1 : Tensor,
# CHECK-NOT: "cpu
# CHECK: [[CUDA:%[^ ]+]] : str = prim::Constant[value="cuda"]()
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: [[A:%[^ ]+]] : Tensor, [[B:%[^ ]+]] : Tensor = jitamp::autocast_promote(%a.1, %b.1, [[CUDA]], [[R]])
# CHECK-NEXT: %t.1 : Tensor = aten::atan2([[A]], [[B]])
# CHECK-NEXT: [[U:%[^ ]+]] : Tensor, [[V:%[^ ]+]] : Tensor = jitamp::autocast_promote(%u.1, %v.1, [[CUDA]], [[R]])
# CHECK-NEXT: %d.1 : Tensor = aten::dot([[U]], [[V]])
# CHECK-NEXT: jitamp::autocast_exit([[G]])
