"""The profiling executor's TensorExpr fuser fuses jitamp's casts where the
autocast state is static (csrc/jit_autocast/profiling/expose_static_casts_to_fuser.h), and the results
stay eager's.

The fuser runs on CUDA by default; these tests turn it on for CPU, where
this build of torch has no LLVM, so the fused kernels run in TensorExpr's
IR interpreter (`_jit_set_te_must_use_llvm_cpu(False)`): the same fusion
groups and lowering, evaluated on the CPU. The fuser fuses only code that
needs no gradient, so every call runs under torch.no_grad().
"""
from __future__ import annotations

import contextlib
import importlib.util
import random
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F
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
    try:
        with fuser_casts(True):  # opt-in (fuser_casts.h)
            yield
    finally:
        torch._C._jit_override_can_fuse_on_cpu(previous[0])
        torch._C._jit_set_te_must_use_llvm_cpu(previous[1])
        torch._C._jit_set_texpr_fuser_enabled(previous[2])


@contextlib.contextmanager
def fuser_casts(enabled: bool):
    """jitamp's pass on or off for the block; the previous setting after."""
    previous = jitamp._C.set_fuser_casts_enabled(enabled)
    try:
        yield previous
    finally:
        jitamp._C.set_fuser_casts_enabled(previous)


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
    with fuser_casts(False) as previous:
        assert previous is True
        kinds = checked_kinds(scaled_mm, (x, w))
        assert not set(FUSIBLE) & set(kinds), kinds


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


# Fallback functions (csrc/jit_autocast/profiling/suspend_autocast_around_fallbacks.h). TorchScript turns
# a fusion group's unfused fallback into a new function, without jitamp's
# `ignore_amp`; with the built-in JIT autocast mode on (TorchScript's
# default, and what the process has after jitamp.disable() or without
# jitamp.enable()), such a function got PyTorch's built-in pass when first
# called under an enabled autocast state: a float16 input came back float32
# from `x * 0.5` in a float16 scope, and CPU eager's list gave way to the
# built-in's CUDA-era one under a caller's autocast.

@pytest.fixture
def builtin_autocast_mode_on():
    previous = torch._C._jit_set_autocast_mode(True)
    try:
        yield
    finally:
        torch._C._jit_set_autocast_mode(previous)


def half_scope(x: torch.Tensor, w: torch.Tensor):
    with torch.autocast("cpu", dtype=torch.float16):
        v = torch.relu(x * 0.5) + 1.0
        h = torch.mm(v, w)
    return v, h


@pytest.mark.parametrize("pass_on", [True, False], ids=["pass_on", "pass_off"])
def test_a_fallback_inside_a_scope_runs_as_jitamp_not_the_builtin(
        builtin_autocast_mode_on, pass_on):
    with fuser_casts(pass_on):
        x, w = torch.randn(6, 6), torch.randn(6, 6)
        scripted = script(half_scope, profiling_executor=True)
        check_against_eager(half_scope, (x, w), scripted=scripted, outer=no_grad_under())
        kinds = all_kinds(torch.jit.last_executed_optimized_graph())
        assert "prim::TensorExprGroup" in kinds and "jitamp::suspend_autocast" in kinds, kinds
        # float16 and bfloat16 fail the group's type check: the fallback runs
        for other in (x.half(), x.bfloat16(), torch.randn(3, 6)):
            check_against_eager(half_scope, (other, w), scripted=scripted, outer=no_grad_under())


def test_a_fallback_under_the_callers_autocast_keeps_cpu_eagers_policy(
        builtin_autocast_mode_on):
    # No scope in the function: the caller's bfloat16 autocast decides.
    # CPU eager keeps exp in bfloat16; the built-in pass's list casts it to
    # float32 (CUDA's list).
    def fn(x: torch.Tensor, w: torch.Tensor):
        e = torch.exp(x * 0.5) + 1.0
        return e, torch.mm(e, w)

    x, w = torch.randn(6, 6), torch.randn(6, 6)
    scripted = script(fn, profiling_executor=True)
    check_against_eager(fn, (x, w), scripted=scripted, outer=no_grad_under())
    assert "prim::TensorExprGroup" in all_kinds(torch.jit.last_executed_optimized_graph())
    bf16 = no_grad_under(lambda: torch.autocast("cpu", dtype=torch.bfloat16))
    for other in (x.bfloat16(), x.half(), x):
        check_against_eager(fn, (other, w), scripted=scripted, outer=bf16)


def test_a_differentiable_subgraphs_fallback_keeps_cpu_eagers_policy(builtin_autocast_mode_on):
    # With gradients, the profiling executor guards each differentiable
    # subgraph by its inputs' requires_grad and makes its fallback function
    # in the plan's outer graph, which no custom pass sees (hence
    # IgnoreAmpInFallbacks, fallback_calls.h). Profiled with an input that
    # needs no gradient, then called with a weight as that argument, the
    # fallback ran `mv` with the built-in pass's casts, bfloat16, where CPU
    # eager keeps it float32 (fuzz seed 216, index 1488).
    def fn(a: torch.Tensor, b: torch.Tensor):
        v = F.nll_loss(a, torch.tensor([0, 1, 2, 3])) + b
        return torch.mv(a, v[0]).unsqueeze(1) + v

    torch.manual_seed(0)
    w = torch.nn.Parameter(torch.randn(4, 4))
    scripted = script(fn, profiling_executor=True)

    def with_weight(f):
        return lambda x, weight_first: f(w if weight_first else x, w)

    bf16 = lambda: torch.autocast("cpu", dtype=torch.bfloat16)
    x = torch.randn(4, 4)
    check_against_eager(with_weight(fn), (x, False), scripted=with_weight(scripted), outer=bf16)
    assert "prim::RequiresGradCheck" in all_kinds(torch.jit.last_executed_optimized_graph())
    for weight_first in (True, False, True):
        check_against_eager(with_weight(fn), (x, weight_first), scripted=with_weight(scripted), outer=bf16)


class _MvOfWeightOrInput(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, a: torch.Tensor, m: torch.Tensor, weight: bool):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return torch.mv(self.w if weight else m, a[0]).unsqueeze(1) + a


def test_a_fallbacks_own_fallback_keeps_cpu_eagers_policy(builtin_autocast_mode_on):
    # The same guard one level down. TorchScript makes a fallback's executor
    # as it makes the fallback, and starts profiling there, from the graph
    # as it was before IgnoreAmpInFallbacks marked it; the fallback's plan,
    # built at its first calls inside the scope, guards the subgraph again,
    # and the second fallback's executor is made under the scope's bfloat16
    # state, with the built-in pass's casts. Reached with a third
    # requires_grad pattern, it ran `mv` in bfloat16 where eager keeps it
    # float32 (fuzz seed 281209, index 28386, in the runner's thread
    # without autocast).
    torch.manual_seed(0)
    module = _MvOfWeightOrInput()
    scripted = script(module, profiling_executor=True)
    x, y = torch.randn(4, 4), torch.randn(4, 4)
    # every input needs a gradient: the plan guards the differentiable subgraph
    check_against_eager(module, (x, y, False), scripted=scripted, grad=True)
    scripted(x.clone().requires_grad_(), y.clone().requires_grad_(), False)  # (the forward's plan)
    assert "prim::RequiresGradCheck" in all_kinds(torch.jit.last_executed_optimized_graph())
    # the weight only: the fallback, whose plan guards again
    check_against_eager(module, (x, y, True), scripted=scripted)
    # neither: the fallback's fallback
    check_against_eager(module, (x, y, False), scripted=scripted)


# Random elementwise chains before, inside and after a CPU scope (float16
# or bfloat16, sometimes disabled, sometimes with a disabled scope nested),
# with mm and prod for the casts, profiled with float32 and then called
# with another shape, float16 and bfloat16 (the groups' fallbacks).
_UNARY = ("torch.relu({})", "({} * 0.5)", "({} + 1.0)", "torch.abs({})",
          "({} - 0.25)", "torch.neg({})")


def _random_program(rng) -> str:
    lines = ["import torch", "", "", "def fn(x: torch.Tensor, w: torch.Tensor):"]
    names = ["x"]

    def bind(expression: str, indent: int) -> None:
        names.append(f"v{len(names)}")
        lines.append(" " * indent + f"{names[-1]} = {expression}")

    def unary(indent: int) -> None:
        bind(rng.choice(_UNARY).format(rng.choice(names)), indent)

    for _ in range(rng.randint(0, 2)):
        unary(4)
    dtype = rng.choice(["torch.bfloat16", "torch.float16"])
    enabled = rng.choice([True, True, True, False])
    lines.append(f"    with torch.autocast('cpu', dtype={dtype}, enabled={enabled}):")
    for _ in range(rng.randint(1, 4)):
        k = rng.random()
        if k < 0.5:
            unary(8)
        elif k < 0.65:
            bind(f"{rng.choice(names)} + {rng.choice(names)}", 8)
        elif k < 0.85:
            bind(f"torch.mm({rng.choice(names)}, w).float()", 8)
        else:
            bind(f"torch.prod({rng.choice(names)}, 1, keepdim=True) * {rng.choice(names)}", 8)
        if rng.random() < 0.2:
            lines.append("        with torch.autocast('cpu', enabled=False):")
            bind(f"torch.mm({rng.choice(names)}.float(), w)", 12)
    for _ in range(rng.randint(0, 2)):
        unary(4)
    lines.append(f"    return {', '.join(names[1:]) or 'x'},")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("pass_on", [True, False], ids=["pass_on", "pass_off"])
def test_random_elementwise_programs_around_scopes_match_eager(
        tmp_path, builtin_autocast_mode_on, pass_on):
    rng = random.Random(2)
    fused = 0
    with fuser_casts(pass_on):
        for index in range(100):
            path = tmp_path / f"program_{index}.py"
            path.write_text(_random_program(rng))
            spec = importlib.util.spec_from_file_location(f"fuser_program_{index}", path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module
            try:
                spec.loader.exec_module(module)
                x, w = torch.randn(6, 6), torch.randn(6, 6)
                scripted = script(module.fn, profiling_executor=True)
                for args in ((x, w), (torch.randn(3, 6), w), (x.half(), w), (x.bfloat16(), w)):
                    check_against_eager(module.fn, args, scripted=scripted, outer=no_grad_under())
                    if args[0] is x:
                        kinds = fused_kinds(torch.jit.last_executed_optimized_graph())
                        fused += "jitamp::fusible_to_fp16" in kinds
            except AssertionError as error:
                raise AssertionError(f"{path.read_text()}\n{error}") from None
            finally:
                del sys.modules[spec.name]
    assert (fused > 0) == pass_on, fused


def test_a_fallback_that_raises_leaves_eagers_state(builtin_autocast_mode_on):
    # Profiled with equal shapes; a y that does not broadcast fails the
    # group's type check, and the fallback raises eager's error from inside
    # the scope: the thread's autocast state after the call is eager's.
    def fn(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        with torch.autocast("cpu", dtype=torch.float16):
            v = torch.relu(x * 0.5) + y
            h = torch.mm(v, v.t())
        return h

    x = torch.randn(6, 6)
    scripted = script(fn, profiling_executor=True)
    outer = no_grad_under(lambda: torch.autocast("cpu", dtype=torch.bfloat16))
    check_against_eager(fn, (x, torch.randn(6, 6)), scripted=scripted, outer=outer)
    assert "prim::TensorExprGroup" in all_kinds(torch.jit.last_executed_optimized_graph())
    check_against_eager(fn, (x, torch.randn(5)), scripted=scripted, outer=outer)
    check_against_eager(fn, (x, torch.randn(5)), scripted=scripted, outer=no_grad_under())
