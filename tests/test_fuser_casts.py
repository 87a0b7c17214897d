"""The profiling executor's TensorExpr fuser fuses jitamp's casts where the
autocast state is static (csrc/jit_autocast/fuser_casts.h), and the results
stay eager's.

The fuser runs on CUDA by default; these tests turn it on for CPU, where
this build of torch has no LLVM, so the fused kernels run in TensorExpr's
IR interpreter (`_jit_set_te_must_use_llvm_cpu(False)`): the same fusion
groups and lowering, evaluated on the CPU. The fuser fuses only code that
needs no gradient, so every call runs under torch.no_grad().
"""
from __future__ import annotations

import contextlib
import subprocess
import sys

import pytest
import torch
from torch import nn

import jitamp
from oracle import check_against_eager, script

FUSIBLE = ("jitamp::fusible_to_fp16", "jitamp::fusible_to_fp32")


@pytest.fixture(autouse=True)
def te_fuser_on_cpu():
    """The TensorExpr fuser on for CPU tensors, without LLVM, and jitamp's
    pass that shows it the casts; restored."""
    previous = (
        torch._C._jit_can_fuse_on_cpu(),
        torch._C._jit_get_te_must_use_llvm_cpu(),
        torch._C._jit_texpr_fuser_enabled(),
    )
    torch._C._jit_override_can_fuse_on_cpu(True)
    torch._C._jit_set_te_must_use_llvm_cpu(False)
    torch._C._jit_set_texpr_fuser_enabled(True)
    pass_was_on = jitamp._C.set_fuser_casts_enabled(True)  # opt-in (fuser_casts.h)
    try:
        yield
    finally:
        jitamp._C.set_fuser_casts_enabled(pass_was_on)
        torch._C._jit_override_can_fuse_on_cpu(previous[0])
        torch._C._jit_set_te_must_use_llvm_cpu(previous[1])
        torch._C._jit_set_texpr_fuser_enabled(previous[2])


def no_grad_under(autocast=None):
    """A factory of torch.no_grad(), inside `autocast()` where given."""
    @contextlib.contextmanager
    def both():
        with contextlib.ExitStack() as stack:
            if autocast is not None:
                stack.enter_context(autocast())
            stack.enter_context(torch.no_grad())
            yield
    return both


def fused_kinds(graph: torch._C.Graph) -> list[str]:
    """The kinds of the nodes inside the graph's TensorExpr groups."""
    kinds = []
    for node in graph.findAllNodes("prim::TensorExprGroup"):
        kinds += [n.kind() for n in node.g("Subgraph").nodes()]
    return kinds


def all_kinds(graph: torch._C.Graph) -> list[str]:
    kinds = []

    def walk(block):
        for node in block.nodes():
            kinds.append(node.kind())
            for sub in node.blocks():
                walk(sub)
            if node.kind() == "prim::TensorExprGroup":
                walk(node.g("Subgraph"))
    walk(graph)
    return kinds


def checked_kinds(fn, args, outer=None) -> list[str]:
    """Scripts `fn` for the profiling executor, checks it against eager
    under torch.no_grad() (inside `outer()` where given), and returns the
    node kinds of the plan its last call ran, fusion groups included."""
    scripted = script(fn, profiling_executor=True)
    check_against_eager(fn, args, scripted=scripted, outer=no_grad_under(outer))
    return all_kinds(torch.jit.last_executed_optimized_graph())


def scaled_mm(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        h = torch.mm(torch.relu(x) * 2.0, w)
    return h


def test_a_static_activation_cast_is_fused_and_exact():
    x, w = torch.randn(8, 16), torch.randn(16, 4)
    scripted = script(scaled_mm, profiling_executor=True)
    check_against_eager(scaled_mm, (x, w), scripted=scripted, outer=no_grad_under())
    graph = torch.jit.last_executed_optimized_graph()
    fused = fused_kinds(graph)
    assert "jitamp::fusible_to_fp16" in fused, graph
    assert "aten::relu" in fused and "aten::mul" in fused, graph


def test_a_fused_group_falls_back_exactly_on_other_inputs():
    # Profiled with float32 of one shape; then float16 (which the cast
    # turns into bfloat16 too), bfloat16 (left alone), another shape, and
    # float64 (not cast: mm then raises eager's dtype error).
    x, w = torch.randn(8, 16), torch.randn(16, 4)
    scripted = script(scaled_mm, profiling_executor=True)
    check_against_eager(scaled_mm, (x, w), scripted=scripted, outer=no_grad_under())
    assert "jitamp::fusible_to_fp16" in fused_kinds(torch.jit.last_executed_optimized_graph())
    for other in (x.half(), x.bfloat16(), torch.randn(3, 16), x.double()):
        check_against_eager(scaled_mm, (other, w), scripted=scripted, outer=no_grad_under())


def test_a_cast_to_float32_is_made_fusible_and_exact():
    # prod is float32 on CPU: its input, a bfloat16 value that an
    # elementwise op made, is cast up inside the scope. The fuser takes no
    # bfloat16 or float16 input on CPU without LLVM, so here the fusible
    # cast runs unfused, through the smart cast's kernel.
    def fn(x: torch.Tensor) -> torch.Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = torch.prod(torch.sigmoid(x.to(torch.bfloat16)) + 1.0, 1)
        return y

    kinds = checked_kinds(fn, (torch.randn(4, 6),))
    assert "jitamp::fusible_to_fp32" in kinds, kinds


def test_a_cast_whose_state_the_caller_decides_stays_a_smart_cast():
    # No scope in the function: the state is the caller's, read at run time.
    def fn(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return torch.mm(torch.relu(x) * 2.0, w)

    x, w = torch.randn(8, 16), torch.randn(16, 4)
    scripted = script(fn, profiling_executor=True)
    outer = no_grad_under(lambda: torch.autocast("cpu", dtype=torch.bfloat16))
    check_against_eager(fn, (x, w), scripted=scripted, outer=outer)
    kinds = all_kinds(torch.jit.last_executed_optimized_graph())
    assert not set(FUSIBLE) & set(kinds), kinds
    assert "jitamp::autocast_to_fp16" in kinds, kinds
    # and the caller's state may change between calls
    check_against_eager(fn, (x, w), scripted=scripted, outer=no_grad_under())


def test_a_disabled_scope_leaves_the_casts_alone():
    def fn(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=False):
            h = torch.mm(torch.relu(x) * 2.0, w)
        return h

    x, w = torch.randn(8, 16), torch.randn(16, 4)
    kinds = checked_kinds(fn, (x, w), outer=lambda: torch.autocast("cpu", dtype=torch.bfloat16))
    assert not set(FUSIBLE) & set(kinds), kinds


def test_a_cast_of_a_value_written_to_stays_a_smart_cast():
    # Eager's cast of y in the first scope is a new tensor; y is written to
    # afterwards, and the graph's alias analysis sees it: no fusible cast of
    # y, and results as eager's.
    def fn(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        y = torch.relu(x) * 2.0
        with torch.autocast("cpu", dtype=torch.bfloat16):
            h = torch.mm(y, w)
        y.add_(1.0)
        return h.float() + y.sum()

    x, w = torch.randn(8, 16), torch.randn(16, 4)
    kinds = checked_kinds(fn, (x, w))
    assert not set(FUSIBLE) & set(kinds), kinds


def test_a_cast_whose_input_is_made_before_its_scope_stays_a_smart_cast():
    # The fuser would move relu and mul down into the scope to fuse them
    # with the cast; their unfused fallback would then run under the
    # scope's state, not the caller's.
    def fn(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        a = torch.relu(x) * 2.0
        with torch.autocast("cpu", dtype=torch.bfloat16):
            h = torch.mm(a, w)
        return h

    x, w = torch.randn(8, 16), torch.randn(16, 4)
    kinds = checked_kinds(fn, (x, w))
    assert not set(FUSIBLE) & set(kinds), kinds


def test_a_cast_read_by_a_node_the_fuser_takes_stays_a_smart_cast():
    # matmul is one of the fuser's ops: a group holding the cast could move
    # down to a reader outside the scope.
    def fn(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            h = torch.matmul(torch.relu(x) * 2.0, w)
        return h

    x, w = torch.randn(8, 16), torch.randn(16, 4)
    kinds = checked_kinds(fn, (x, w))
    assert not set(FUSIBLE) & set(kinds), kinds


def test_the_pass_is_off_by_default():
    code = ("import jitamp, sys; "
            "sys.exit(0 if jitamp._C.set_fuser_casts_enabled(False) is False else 1)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_the_pass_can_be_turned_off():
    x, w = torch.randn(8, 16), torch.randn(16, 4)
    previous = jitamp._C.set_fuser_casts_enabled(False)
    try:
        assert previous is True
        kinds = checked_kinds(scaled_mm, (x, w))
        assert not set(FUSIBLE) & set(kinds), kinds
    finally:
        jitamp._C.set_fuser_casts_enabled(previous)


class Block(nn.Module):
    def __init__(self, width: int = 32):
        super().__init__()
        self.up = nn.Linear(width, 2 * width)
        self.down = nn.Linear(2 * width, width)
        self.norm = nn.LayerNorm(width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            h = self.up(torch.tanh(x) * 0.5)  # float32 until linear casts it
            h = self.down(torch.relu(h))
            y = self.norm(x + h.float())
        return y


def test_a_module_with_fused_casts_matches_eager():
    torch.manual_seed(0)
    model = Block().eval()
    x = torch.randn(16, 32)
    scripted = script(model, profiling_executor=True)
    check_against_eager(model, (x,), scripted=scripted, outer=no_grad_under())
    fused = fused_kinds(torch.jit.last_executed_optimized_graph())
    assert "jitamp::fusible_to_fp16" in fused and "aten::tanh" in fused, fused
    check_against_eager(model, (x.half(),), scripted=scripted, outer=no_grad_under())
    check_against_eager(model, (torch.randn(5, 32),), scripted=scripted, outer=no_grad_under())
