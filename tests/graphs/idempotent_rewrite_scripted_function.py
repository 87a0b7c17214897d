# Rewriting is idempotent: `scripted` was rewritten at import (three times) and
# the dump rewrites it again; each operand still has one cast of each kind.
# RUN: jitamp dump %s:scripted | filecheck %s
from typing import Optional

import torch

import jitamp


def _many(x, y, g, dt: Optional[int]):
    with torch.autocast("cpu"):
        a = torch.mm(x, y)
        b = torch.prod(a)
        c = torch.grid_sampler(x, g, 0, 0, False)
        d = torch.softmax(c, 1, dt)
        e = torch.cat([a, d])
        f = torch.addcmul(e, e, e)
    return b, f


with jitamp.enable():
    scripted = torch.jit.script(_many)
jitamp.rewrite(scripted)
jitamp.rewrite(scripted)

# CHECK-LABEL: graph(%x.1 : Tensor,
# CHECK-DAG: [[CPU:%[^ ]+]] : str = prim::Constant[value="cpu"]()
# CHECK-DAG: [[CUDA:%[^ ]+]] : str = prim::Constant[value="cuda"]()
# CHECK-DAG: [[BOTH:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# CHECK: prim::CallMethod[name="__init__"]
# CHECK-NEXT: jitamp::autocast_cache_enabled(
# CHECK-NEXT: prim::SetAttr[name="_jitamp_cache_enabled"]
# CHECK-NEXT: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: [[Y:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%y.1, [[BOTH]], [[R]])
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[BOTH]], [[R]])
# CHECK-NEXT: %a.1 : Tensor = aten::mm([[X]], [[Y]])
# CHECK-NEXT: [[A1:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%a.1, [[CPU]], [[R]])
# CHECK-NEXT: [[A2:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32([[A1]], [[CUDA]], [[R]])
# CHECK-NEXT: %b.1 : Tensor = aten::prod([[A2]],
# CHECK-NEXT: [[GF:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%g.1, [[CPU]], [[R]])
# CHECK-NEXT: [[XF:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%x.1, [[CPU]], [[R]])
# CHECK-NEXT: [[XP:%[^ ]+]] : Tensor, [[GP:%[^ ]+]] : Tensor = jitamp::autocast_promote([[XF]], [[GF]], [[CUDA]], [[R]])
# CHECK-NEXT: %c.1 : Tensor = aten::grid_sampler([[XP]], [[GP]],
# CHECK-NEXT: [[C:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%c.1, [[CUDA]], %dt.1, [[R]])
# CHECK-NEXT: %d.1 : Tensor = aten::softmax([[C]], {{%[^ ]+}}, %dt.1)
# CHECK-NEXT: [[L:%[^ ]+]] : Tensor[] = prim::ListConstruct(%a.1, %d.1)
# CHECK-NEXT: [[LP:%[^ ]+]] : Tensor[] = jitamp::autocast_promote([[L]], [[CPU]], [[R]])
# CHECK-NEXT: %e.1 : Tensor = aten::cat([[LP]],
# CHECK-NEXT: [[E1:%[^ ]+]] : Tensor, [[E2:%[^ ]+]] : Tensor, [[E3:%[^ ]+]] : Tensor = jitamp::autocast_promote(%e.1, %e.1, %e.1, [[CUDA]], [[R]])
# CHECK-NEXT: %f.1 : Tensor = aten::addcmul([[E1]], [[E2]], [[E3]],
# CHECK-NEXT: jitamp::autocast_exit([[G]])
# CHECK-NOT: jitamp::autocast_cache_enabled
# CHECK-NOT: jitamp::autocast_to
# CHECK-NOT: jitamp::autocast_promote
