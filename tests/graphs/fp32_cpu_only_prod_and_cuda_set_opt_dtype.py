# prod: fp32 on CPU, fp32_set_opt_dtype on CUDA -> chained casts "cpu" then
# "cuda"; with an explicit dtype only the CPU cast remains, as in eager.
# RUN: jitamp dump %s:product | filecheck %s --check-prefix NODTYPE
# RUN: jitamp dump %s:product_f64 | filecheck %s --check-prefix DTYPE
import torch


def product(x):
    with torch.autocast("cpu"):
        p = torch.prod(x)
    return p


def product_f64(x):
    with torch.autocast("cpu"):
        p = torch.prod(x, dtype=torch.float64)
    return p

# NODTYPE-LABEL: graph(%x.1 : Tensor):
# NODTYPE-DAG: [[CPU:%[^ ]+]] : str = prim::Constant[value="cpu"]()
# NODTYPE-DAG: [[CUDA:%[^ ]+]] : str = prim::Constant[value="cuda"]()
# NODTYPE: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# NODTYPE-NEXT: [[C1:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%x.1, [[CPU]], [[R]])
# NODTYPE-NEXT: [[C2:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32([[C1]], [[CUDA]], [[R]])
# NODTYPE-NEXT: %p.1 : Tensor = aten::prod([[C2]],
# NODTYPE-NEXT: jitamp::autocast_exit([[G]])

# DTYPE-LABEL: graph(%x.1 : Tensor):
# DTYPE-NOT: cuda"
# DTYPE: [[CPU:%[^ ]+]] : str = prim::Constant[value="cpu"]()
# DTYPE-NOT: cuda"
# DTYPE: [[F64:%[^ ]+]] : int = prim::Constant[value=7]()
# DTYPE: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# DTYPE-NEXT: [[C1:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%x.1, [[CPU]], [[R]])
# DTYPE-NEXT: %p.1 : Tensor = aten::prod([[C1]], [[F64]])
# DTYPE-NEXT: jitamp::autocast_exit([[G]])
