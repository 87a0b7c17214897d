# promote on CPU only: index_copy promotes self, index and source together
# (the three-tensor form, devices "cpu"); the int dim stays in place.
# RUN: jitamp dump %s:scatter_rows | filecheck %s
import torch


def scatter_rows(x, i, s):
    with torch.autocast("cpu"):
        y = torch.index_copy(x, 0, i, s)
    return y

# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK-NOT: cuda"
# CHECK: [[CPU:%[^ ]+]] : str = prim::Constant[value="cpu"]()
# CHECK-NOT: cuda"
# CHECK: [[DIM:%[^ ]+]] : int = prim::Constant[value=0]()
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor, [[I:%[^ ]+]] : Tensor, [[S:%[^ ]+]] : Tensor = jitamp::autocast_promote(%x.1, %i.1, %s.1, [[CPU]], [[R]])
# CHECK-NEXT: %y.1 : Tensor = aten::index_copy([[X]], [[DIM]], [[I]], [[S]])
# CHECK-NEXT: jitamp::autocast_exit([[G]])
