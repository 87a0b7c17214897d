# fp32 on CPU only: avg_pool3d and max_pool3d each cast their input with
# devices "cpu" (2d pooling is on no list).
# RUN: jitamp dump %s:pools | filecheck %s
import torch
import torch.nn.functional as F


def pools(x, img):
    with torch.autocast("cpu"):
        a = F.avg_pool3d(x, 2)
        m = torch.max_pool3d(x, [2, 2, 2])
        p = F.avg_pool2d(img, 2)
    return a, m, p

# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK-NOT: cuda"
# CHECK: [[CPU:%[^ ]+]] : str = prim::Constant[value="cpu"]()
# CHECK-NOT: cuda"
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK: [[X1:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%x.1, [[CPU]], [[R]])
# CHECK-NEXT: %a.1 : Tensor = aten::avg_pool3d([[X1]],
# CHECK: [[X2:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%x.1, [[CPU]], [[R]])
# CHECK-NEXT: %m.1 : Tensor = aten::max_pool3d([[X2]],
# CHECK-NOT: jitamp::autocast_to
# CHECK: %p.1 : Tensor = aten::avg_pool2d(%img.1,
# CHECK-NEXT: jitamp::autocast_exit([[G]])
