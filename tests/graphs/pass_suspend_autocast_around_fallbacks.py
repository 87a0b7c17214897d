# suspend_autocast_around_fallbacks (registered pipeline, the custom pass
# TorchScript's profiling executor runs after fusion;
# profiling/suspend_autocast_around_fallbacks.h): each prim::FallbackGraph
# call gets `jitamp::suspend_autocast()` before it as its last input, and
# the fallback's body starts with `jitamp::resume_autocast`, so that the
# fallback function TorchScript makes of it is called with the CPU and CUDA
# autocast flags off (the built-in JIT autocast pass leaves it alone) and
# its body runs under the caller's state. Neither `jitamp opt` nor
# torch._C.parse_ir can make a prim::FallbackGraph (a node with a subgraph),
# so the target is the graph the pass really gets, made when this file is
# imported: a profiled elementwise graph (complete tensor types, as after
# profiling) run through TorchScript's TensorExpr fuser
# (torch._C._jit_pass_fuse_tensorexprs, with CPU fusion on for that call
# only, flags restored), which guards the prim::TensorExprGroup with a
# prim::TypeCheck and puts the unfused code in a prim::FallbackGraph. The
# pre-fusion step the table runs before it (expose_static_casts_to_fuser)
# runs first and finds nothing to do on a fused graph. The BEFORE run shows
# the fallback called with x alone and a body that does not resume. The
# two steps are the registered pipeline whole, so its run (the last RUN
# line) meets the same CHECKs: the fusion group and its type guard stay as
# the fuser made them.
# RUN: jitamp opt %s:scaled --passes=expose_static_casts_to_fuser | filecheck %s --check-prefix BEFORE
# RUN: jitamp opt %s:scaled --passes=expose_static_casts_to_fuser,suspend_autocast_around_fallbacks | filecheck %s
# RUN: jitamp opt %s:scaled --passes=registered | filecheck %s
import torch

_T = "Float(4, 4, strides=[4, 1], requires_grad=0, device=cpu)"
_PROFILED = f"""
graph(%x.1 : {_T}):
  %half : float = prim::Constant[value=0.5]()
  %one : int = prim::Constant[value=1]()
  %y.1 : {_T} = aten::mul(%x.1, %half)
  %z.1 : {_T} = aten::add(%y.1, %x.1, %one)
  return (%z.1)
"""


def _fused():
    graph = torch._C.parse_ir(_PROFILED)
    previous = (torch._C._jit_can_fuse_on_cpu(), torch._C._jit_get_te_must_use_llvm_cpu(),
                torch._C._jit_texpr_fuser_enabled())
    torch._C._jit_override_can_fuse_on_cpu(True)
    torch._C._jit_set_te_must_use_llvm_cpu(False)
    torch._C._jit_set_texpr_fuser_enabled(True)
    try:
        torch._C._jit_pass_fuse_tensorexprs(graph)
    finally:
        torch._C._jit_override_can_fuse_on_cpu(previous[0])
        torch._C._jit_set_te_must_use_llvm_cpu(previous[1])
        torch._C._jit_set_texpr_fuser_enabled(previous[2])
    return torch._C._create_function_from_graph("scaled", graph)


scaled = _fused()

# BEFORE: prim::TypeCheck
# BEFORE: prim::TensorExprGroup_0(
# BEFORE: {{%[^ ]+}} : Tensor = prim::FallbackGraph_1(%x.1)
# BEFORE: with prim::FallbackGraph_1 = graph(%x.1 : Float({{[^)]*}})):
# BEFORE-NEXT: prim::Constant
# BEFORE-NOT: jitamp::

# CHECK: prim::TypeCheck
# CHECK: {{%[^ ]+}} : Float({{[^)]*}}) = prim::TensorExprGroup_0(
# CHECK: block1():
# CHECK-NEXT: [[S:%[^ ]+]] : __torch__.torch.classes.jitamp.SuspendedAutocast = jitamp::suspend_autocast()
# CHECK-NEXT: {{%[^ ]+}} : Tensor = prim::FallbackGraph_1(%x.1, [[S]])
# CHECK: with prim::TensorExprGroup_0 = graph(%x.1 : Float({{[^)]*}})):
# CHECK-NOT: jitamp::
# CHECK: with prim::FallbackGraph_1 = graph(%x.1 : Float({{[^)]*}}),
# CHECK-NEXT: [[T:%[^ ]+]] : __torch__.torch.classes.jitamp.SuspendedAutocast):
# CHECK-NEXT: = jitamp::resume_autocast([[T]])
# CHECK-NEXT: prim::Constant
