# expose_static_casts_to_fuser (registered pipeline, the custom pass
# TorchScript's profiling executor runs before fusion, when
# jitamp._C.set_fuser_casts_enabled(True);
# profiling/expose_static_casts_to_fuser.h): a smart cast of a profiled
# tensor, in a scope whose state is static, becomes
# jitamp::fusible_to_fp16 / fusible_to_fp32 carrying the dtype it makes, so
# that the TensorExpr fuser can fuse it with its neighbours. The pass gets
# a graph whose tensor uses read prim::profile nodes, which neither
# TorchScript's scripting nor torch._C.parse_ir makes, so the target is
# made when this file is imported: the function's graph after jitamp's
# rewrite and preoptimize pipelines (what the profiling executor profiles:
# the scope's object inlined, its state readable), with a prim::profile (float32, CPU, as profiling
# records it) in front of each cast. The pass asks whether the fuser fuses
# on the tensor's device: the CHECK run turns CPU fusion on (--fuse-on-cpu);
# the BEFORE run, with it off as TorchScript has it by default, shows the
# graph left as it came.
# RUN: jitamp opt %s:scaled_mm --passes=expose_static_casts_to_fuser | filecheck %s --check-prefix BEFORE
# RUN: jitamp opt %s:scaled_mm --passes=expose_static_casts_to_fuser --fuse-on-cpu | filecheck %s
import torch

import jitamp.passes


def _scaled_mm(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = torch.mm(x * 2.0, w)
    return y.relu()


def _profiled():
    graph = torch.jit.script(_scaled_mm).graph.copy()
    for pipeline in ("rewrite", "preoptimize"):
        graph = jitamp.passes.run_pipeline(pipeline, graph)
    profiled = torch._C.TensorType.create_from_tensor(torch.zeros(4, 4))
    for cast in graph.findAllNodes("jitamp::autocast_to_fp16"):
        profile = graph.create("prim::profile", [cast.inputsAt(0)], 1)
        profile.ty_("profiled_type", profiled)
        profile.insertBefore(cast)
        cast.replaceInput(0, profile.output())
    return torch._C._create_function_from_graph("scaled_mm", graph)


scaled_mm = _profiled()

# BEFORE: [[W:%[^ ]+]] : Tensor = prim::profile[profiled_type=Float(4, 4
# BEFORE-NEXT: jitamp::autocast_to_fp16([[W]],
# BEFORE-NOT: jitamp::fusible_to

# CHECK: [[W:%[^ ]+]] : Tensor = prim::profile[profiled_type=Float(4, 4
# CHECK-NEXT: [[BF16:%[^ ]+]] : int = prim::Constant[value=15]()
# CHECK-NEXT: jitamp::fusible_to_fp16([[W]], {{%[^ ]+}}, [[BF16]], {{%[^ ]+}})
# CHECK: [[X:%[^ ]+]] : Tensor = prim::profile[profiled_type=Float(4, 4
# CHECK: jitamp::fusible_to_fp16([[X]],
# CHECK: aten::mm(
# CHECK-NOT: jitamp::autocast_to_fp16
