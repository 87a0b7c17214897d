"""jitamp's simple executor runs its plan less the smart casts that the op's
own autocast kernel makes anyway (csrc/jit_autocast/preoptimize.h,
SimpleExecutorPlan): jitamp's scope ops set eager's autocast state, so each
op casts its own arguments, as in eager. Dropped: every cast in a loop, and
the casts of ops that read no argument or attribute; an op's casts go or
stay together. The rewritten graph, and the plan callers inline, keep them."""
from typing import List

import pytest
import torch
from torch import nn

from oracle import check_against_eager, script


def weight_in_a_loop(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        for _ in range(4):
            x = torch.mm(x, w)
        return x


def weight_in_a_loop_uncached(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16, cache_enabled=False):
        for _ in range(4):
            x = torch.mm(x, w)
        return x


def activations_only(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        q = torch.mm(x, w)
        return torch.mm(q, q.t()).softmax(-1) @ q


def alias_of_an_argument(x: torch.Tensor) -> List[torch.Tensor]:
    # v is x itself (a leaf): kl_div's two fp32 casts are both x's, and the
    # order they are made in decides the order backward sums x's gradients in
    # (fuzz batch 20261123, program 119, under an outer float16 autocast).
    v = x.to(x.dtype)
    return [v, torch.nn.functional.kl_div(x, v, reduction="none"), x * 2]


class LoopOverWeight(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 4) / 2)

    def forward(self, x: torch.Tensor, n: int) -> torch.Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            for _ in range(n):
                x = torch.mm(x, self.w).relu() + torch.mm(x, self.w)
            return x


def _t(seed: int, dtype=torch.float32) -> torch.Tensor:
    return torch.randn(4, 4, generator=torch.Generator().manual_seed(seed)).to(dtype)


@pytest.mark.parametrize("fn", [weight_in_a_loop, weight_in_a_loop_uncached, activations_only])
@pytest.mark.parametrize("outer", [None, torch.no_grad], ids=["grad", "no_grad"])
def test_against_eager(fn, outer):
    check_against_eager(fn, [_t(1), _t(2)], outer=outer, grad=outer is None)


def test_an_ops_casts_go_together():
    check_against_eager(alias_of_an_argument, [_t(3, torch.bfloat16)],
                        outer=lambda: torch.autocast("cpu", dtype=torch.float16), grad=True)


@pytest.mark.parametrize("outer", [None, torch.no_grad], ids=["grad", "no_grad"])
def test_module_weight_in_a_loop(outer):
    torch.manual_seed(0)
    eager = LoopOverWeight()
    scripted = script(LoopOverWeight())
    scripted.load_state_dict(eager.state_dict())
    check_against_eager(eager, [_t(4), 3], scripted=scripted, outer=outer, grad=outer is None)


def _casts(graph) -> int:
    return sum(len(graph.findAllNodes(kind, recurse=True)) for kind in
               ("jitamp::autocast_to_fp16", "jitamp::autocast_to_fp32", "jitamp::autocast_promote"))


def test_what_the_executor_runs():
    scripted = script(weight_in_a_loop)
    assert _casts(scripted.graph) == 2
    scripted(_t(1), _t(2))
    assert _casts(torch.jit.last_executed_optimized_graph()) == 0
    scripted = script(activations_only)
    assert _casts(scripted.graph) == 7  # softmax's is CUDA's only
    scripted(_t(1), _t(2))
    assert _casts(torch.jit.last_executed_optimized_graph()) == 2  # mm(x, w)'s


def callee(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    for _ in range(2):
        x = torch.mm(x, y)
    return x


def caller(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return callee(x.relu(), y.relu())


def test_callers_inline_every_cast():
    """A caller run by the profiling executor inlines a callee run by the
    simple executor with its casts (its symbolic autodiff and fusers read
    them): the plan callers inline is not the simple executor's."""
    simple_callee = script(callee)
    simple_callee(_t(1), _t(2))
    assert _casts(simple_callee.graph) == 2
    assert _casts(torch.jit.last_executed_optimized_graph()) == 0
    profiled = script(caller, profiling_executor=True)
    with torch.no_grad():
        for _ in range(3):
            out = profiled(_t(1), _t(2))
    assert _casts(torch.jit.last_executed_optimized_graph()) > 0
    with torch.no_grad():
        assert torch.equal(out, caller(_t(1), _t(2)))
