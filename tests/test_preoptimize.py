"""The graph TorchScript's executors compile is jitamp's preoptimization of
the rewritten graph (csrc/jit_autocast/pipeline/pipeline.h), not TorchScript's:
TorchScript's peephole pass folds `x.t().t()` to `x`, a view to its base,
and eager's cast cache tells the two apart (it keeps the cast of a leaf that
requires grad, never a view's). Fuzz findings 9 and 10."""
import io
from typing import Tuple

import pytest
import torch
from torch import nn

import jitamp
from oracle import check_against_eager, cpu_autocast, script, script_without_jitamp


def transposed_twice(x: torch.Tensor) -> torch.Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return torch.mm(x, x.t().t())


def transpose(y: torch.Tensor) -> torch.Tensor:
    return y.t()


def transposed_in_callees(x: torch.Tensor) -> torch.Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return torch.mm(x, transpose(transpose(x)))


def transposed_in_a_branch(x: torch.Tensor, flag: bool) -> torch.Tensor:
    v = x.t()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        w = x
        if flag:
            w = v.t()
        return torch.mm(x, w)


def callers_state(x: torch.Tensor) -> torch.Tensor:
    return torch.mm(x, x.t().t())


def own_alias(x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    v = x.t()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return torch.mm(x, v.t()), torch.ops.aten.alias(v) * 2


class Transpose(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.t()


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.transpose = Transpose()
        self.fc = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return self.fc(torch.mm(x, self.transpose(self.transpose(x))))


def _x() -> torch.Tensor:
    return torch.randn(4, 4, generator=torch.Generator().manual_seed(5))


@pytest.mark.parametrize("fn, args", [
    (transposed_twice, []),
    (transposed_in_callees, []),
    (transposed_in_a_branch, [True]),
    (own_alias, []),
], ids=["same-function", "callees", "branch", "own-alias"])
def test_view_of_a_view_is_cast_apart(fn, args):
    """x (a leaf that requires grad: its cast is cached) and x.t().t() (a
    view: cast apart); backward sums their gradients in float32, as eager.
    With the fold, both share the cached cast and backward sums in bfloat16
    (the gradients differ by about 1e-2 here)."""
    check_against_eager(fn, [_x(), *args], grad=True)


def test_callers_autocast():
    check_against_eager(callers_state, [_x()], outer=cpu_autocast(), grad=True)


def test_submodule_method_saved_and_loaded():
    """Methods inlined into their caller, and a model loaded by
    torch.jit.load (its loader object makes jitamp's plan at load)."""
    torch.manual_seed(0)
    eager = Model()
    scripted = script(Model())
    scripted.load_state_dict(eager.state_dict())
    check_against_eager(eager, [_x()], scripted=scripted, grad=True)
    buffer = io.BytesIO()
    torch.jit.save(script(Model()), buffer)
    buffer.seek(0)
    loaded = torch.jit.load(buffer)
    loaded.load_state_dict(eager.state_dict())
    check_against_eager(eager, [_x()], scripted=loaded, grad=True)


def _transposes_run(fn, *args) -> int:
    fn(*args)
    return len(torch.jit.last_executed_optimized_graph().findAllNodes("aten::t", recurse=True))


def test_the_plan_keeps_both_transposes():
    """What the executor ran: both transposes with jitamp, none without (the
    peephole pass folds the pair, and the first one is then dead); no
    aten::alias of jitamp's is left, the function's own stays."""
    assert _transposes_run(script(transposed_in_callees), _x()) == 2
    assert _transposes_run(script_without_jitamp(transposed_in_callees), _x()) == 0
    assert _transposes_run(script(transposed_twice), _x()) == 2
    assert _transposes_run(script_without_jitamp(transposed_twice), _x()) == 0

    scripted = script(own_alias)
    scripted(_x())
    assert len(torch.jit.last_executed_optimized_graph().findAllNodes("aten::alias", recurse=True)) == 1


def test_rewritten_again_before_and_after_the_first_call():
    """jitamp's plan does not count as having run: the function can be
    rewritten again (nothing to do) until it runs, and after."""
    scripted = script(transposed_in_callees)
    assert jitamp.rewrite(scripted) == []
    check_against_eager(transposed_in_callees, [_x()], scripted=scripted, grad=True)
    assert jitamp.rewrite(scripted) == []
