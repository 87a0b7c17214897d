"""Ops whose result the autocast state decides, with no cast in the IR, are
not computed ahead of time in another state (csrc/jit_autocast/ir/fold_barriers.h;
fuzz finding 11).

TorchScript's constant propagation runs every op whose inputs are constants,
once, in the thread's state of that moment: torch.jit.freeze does (frozen
weights are constants), and so does the profiling executor when it
optimizes a graph. `F.pad(w, mode="reflect")` reaches reflection_pad1d
inside the composite pad, which eager's CPU autocast runs in float32: folded
with autocast off, it stayed bfloat16. Each case here is checked against
eager (the oracle) for callers in several autocast states, several calls
each; the graph checks say where the op was done once and where it runs at
each call."""
import pytest
import torch
import torch.nn.functional as F
from torch import Tensor, nn

import jitamp
import oracle
from oracle import check_against_eager, cpu_autocast, no_grad_under, torchscript_deprecation_ignored

pytestmark = pytest.mark.filterwarnings("ignore:`torch\\.jit\\.\\w+` is deprecated")

BARRIER = "jitamp::autocast_dependent"

# The caller's eager autocast state; the first is the freezing thread's.
OUTERS = {
    "no_outer": None,
    "outer_bf16": cpu_autocast(torch.bfloat16),
    "outer_fp16": cpu_autocast(torch.float16),
    "outer_disabled": cpu_autocast(enabled=False),
}


def reflect(w: Tensor) -> Tensor:
    return F.pad(w.unsqueeze(0), [1, 1], mode="reflect").squeeze(0)


class PadOutside(nn.Module):
    """The finding: the caller's state decides the pad's dtype."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 4))

    def forward(self, x: Tensor):
        return reflect(self.w.to(torch.bfloat16)), x


class PadInScope(nn.Module):
    """In a static scope: the scope's state decides it, known at freezing."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 4))

    def forward(self, x: Tensor):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return reflect(self.w.to(torch.bfloat16)), x


class ProductOfWeights(nn.Module):
    """matmul of two frozen weights in a static scope: the casts fold to
    bfloat16 constants, and then the matmul's inputs are constants too."""

    def __init__(self):
        super().__init__()
        self.a = nn.Parameter(torch.randn(4, 2))
        self.b = nn.Parameter(torch.randn(2, 4))

    def forward(self, x: Tensor):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            w = self.a @ self.b
            return x @ w, w


class EinsumOutside(nn.Module):
    """einsum reaches bmm (lower precision) in its decomposition."""

    def __init__(self):
        super().__init__()
        self.a = nn.Parameter(torch.randn(4, 3))
        self.b = nn.Parameter(torch.randn(3, 4))

    def forward(self, x: Tensor):
        return torch.einsum("ij,jk->ik", self.a, self.b), x


class Reflect(nn.Module):
    def forward(self, w: Tensor) -> Tensor:
        return reflect(w)


class PassesItsWeight(nn.Module):
    """A submodule whose argument is the caller's weight: constant only
    once freezing inlines the call."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 4))
        self.sub = Reflect()

    def forward(self, x: Tensor):
        return self.sub(self.w.to(torch.bfloat16)), x


class PadInALoop(nn.Module):
    """A loop with a constant trip count, which freezing unrolls."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 4))

    def forward(self, x: Tensor):
        w = self.w.to(torch.bfloat16)
        for _ in range(2):
            w = reflect(w)
        return w, x


class Independent(nn.Module):
    """Ops the pass cannot tell are uncast (CompositeImplicitAutograd) but
    whose bits no state changes: done once at freezing."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 4))

    def forward(self, x: Tensor):
        return x * self.w.square() + self.w.narrow(0, 1, 2).sum()


CASES = [PadOutside, PadInScope, ProductOfWeights, EinsumOutside, PassesItsWeight, PadInALoop, Independent]


def frozen(cls, *, profiling_executor=False, how=torch.jit.freeze):
    torch.manual_seed(0)
    model = cls().eval()
    scripted = oracle.script(model, profiling_executor=profiling_executor)
    with torchscript_deprecation_ignored():
        return model, how(scripted)


def nodes(graph, kind):
    return graph.findAllNodes(kind)


@pytest.mark.parametrize("profiling", [False, True], ids=["simple", "profiling"])
@pytest.mark.parametrize("outer", list(OUTERS))
@pytest.mark.parametrize("cls", CASES, ids=lambda c: c.__name__)
def test_frozen_model_matches_eager_in_every_callers_state(cls, outer, profiling):
    model, frozen_model = frozen(cls, profiling_executor=profiling)
    # Every caller state on the same frozen model, the one under test last
    # (the profiling executor optimizes at the first calls, in their state).
    for name, first in OUTERS.items():
        if name != outer:
            with torch.no_grad():
                check_against_eager(model, (torch.randn(4, 4),), scripted=frozen_model, outer=first, calls=[1])
    check_against_eager(model, (torch.randn(4, 4),), scripted=frozen_model, outer=no_grad_under(OUTERS[outer]))


def test_the_callers_state_keeps_the_op_and_its_barrier():
    _, frozen_model = frozen(PadOutside)
    graph = frozen_model.graph
    (pad,) = nodes(graph, "aten::pad")
    assert pad.inputsAt(0).node().kind() == BARRIER, graph
    assert pad.inputsAt(0).node().inputsAt(0).node().kind() == "prim::Constant", graph


@pytest.mark.parametrize("cls", [PadInScope, ProductOfWeights, Independent], ids=lambda c: c.__name__)
def test_an_op_every_state_agrees_on_is_done_once(cls):
    _, frozen_model = frozen(cls)
    graph = frozen_model.graph
    assert nodes(graph, BARRIER) == [], graph
    for kind in ("aten::pad", "aten::square", "aten::narrow", "aten::sum"):
        assert nodes(graph, kind) == [], graph
    if cls is ProductOfWeights:
        # the product of the two weights, not the one with x
        (matmul,) = nodes(graph, "aten::matmul")
        assert matmul.inputsAt(1).node().kind() == "prim::Constant", graph
    if cls is PadInScope:
        (out,) = [n.output().toIValue() for n in nodes(graph, "prim::Constant")
                  if n.output().type().kind() == "TensorType"]
        assert out.dtype == torch.float32  # reflection_pad1d's fp32 policy


def test_a_dependent_op_keeps_its_barrier_only_while_its_inputs_may_be_constants():
    class PadOfInput(nn.Module):
        def forward(self, x: Tensor):
            return reflect(x)

    _, frozen_model = frozen(PadOfInput)
    # x is the call's argument; a module that calls this one may be frozen
    # later with a constant there (frozen modules stay modules): kept.
    (pad,) = nodes(frozen_model.graph, "aten::pad")
    assert pad.inputsAt(0).node().kind() == BARRIER

    class PadOfCast(nn.Module):
        def forward(self, x: Tensor):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                return reflect(torch.mm(x, x))

    _, frozen_model = frozen(PadOfCast)
    # the mm's result comes from a smart cast's: never a constant
    assert nodes(frozen_model.graph, BARRIER) == [], frozen_model.graph


def test_simple_executor_plan_has_no_barrier():
    model, frozen_model = frozen(PadOutside)
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        frozen_model(torch.randn(4, 4))
    plan = torch.jit.last_executed_optimized_graph()
    assert nodes(plan, BARRIER) == [] and len(nodes(plan, "aten::pad")) == 1, plan


def test_profiling_executor_does_not_fold_in_the_first_callers_state():
    """Not frozen: the profiling executor's constant propagation runs at
    the first calls, in their autocast state (`torch.ones` is a constant)."""
    def fn(x: Tensor):
        c = torch.ones(1, 4, 4).to(torch.bfloat16)
        return F.pad(c, [1, 1], mode="reflect"), x

    scripted = oracle.script(fn, profiling_executor=True)
    check_against_eager(fn, (torch.randn(2),), scripted=scripted, outer=None)
    check_against_eager(fn, (torch.randn(2),), scripted=scripted, outer=cpu_autocast(torch.bfloat16))


def test_standalone_caller_off_has_no_jitamp_op():
    model, frozen_model = frozen(PadOutside, how=lambda m: jitamp.freeze(m, standalone=True))
    assert [n for n in frozen_model.graph.nodes() if n.kind().startswith("jitamp::")] == []
    check_against_eager(model, (torch.randn(4, 4),), scripted=frozen_model, outer=no_grad_under(None))


def test_the_rewrite_adds_no_second_barrier():
    _, frozen_model = frozen(PadOutside)
    before = str(frozen_model.graph)
    jitamp.rewrite(frozen_model)
    assert str(frozen_model.graph) == before


class WritesTheResult(nn.Module):
    """An op every state agrees on, whose result is then written in place:
    done at freezing it would be one constant for all calls, each call
    writing into the next one's (fuzzer, seed 99: cumsum, softmax)."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 4))

    def forward(self, x: Tensor):
        v = torch.cumsum(self.w, 1)
        out = v * 2
        v.addmm_(x, v)
        return out, v


def test_an_op_whose_result_is_written_runs_at_each_call():
    model, frozen_model = frozen(WritesTheResult)
    assert len(nodes(frozen_model.graph, "aten::cumsum")) == 1, frozen_model.graph
    for outer in OUTERS.values():
        check_against_eager(model, (torch.randn(4, 4),), scripted=frozen_model, outer=no_grad_under(outer))


def test_profiling_plan_made_under_a_callers_float16_keeps_the_scopes_bfloat16():
    """ProductOfWeights frozen: the folded casts leave `a @ b` with constant
    inputs; the profiling executor's constant propagation would run it when
    it optimizes, under that call's CPU float16 autocast (the scope's
    bfloat16 is set only when the graph runs)."""
    model, frozen_model = frozen(ProductOfWeights, profiling_executor=True)
    x = torch.randn(4, 4)
    for _ in range(3):
        check_against_eager(model, (x,), scripted=frozen_model,
                            outer=no_grad_under(cpu_autocast(torch.float16)), calls=[1])
    check_against_eager(model, (x,), scripted=frozen_model, outer=no_grad_under(None))
