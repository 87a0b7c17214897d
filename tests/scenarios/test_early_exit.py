"""`return` / `break` / `continue` inside an autocast scope.

TorchScript's front end compiles early returns in a `with` block that ends
the function (and so in a function decorated with @torch.autocast, whose
body is one such block); those run as eager does. An exit that leaves a
block with code after it fails in TorchScript's front end with an internal
assert; with jitamp enabled that becomes an error that says what and where.
"""
import inspect

import pytest
import torch
from torch import Tensor

import oracle
from oracle import check_against_eager
from scenario_helpers import OUTERS, WARNING_FILTERS, X, odd

pytestmark = WARNING_FILTERS


def returns_early_in_final_scope(x: Tensor, flag: bool):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        if flag:
            return torch.mm(x, x)
        y = torch.mm(x, x.t())
        return y * 2


@torch.autocast("cpu", dtype=torch.bfloat16)
def decorated_returns_early(x: Tensor, flag: bool):
    if flag:
        return torch.mm(x, x)
    return torch.softmax(x, dim=-1)


@pytest.mark.parametrize("outer", ["no_outer", "outer_fp16"])
@pytest.mark.parametrize("fn", [returns_early_in_final_scope, decorated_returns_early],
                         ids=["final_scope", "decorated"])
def test_early_return_that_torchscript_compiles(fn, outer):
    check_against_eager(fn, [X, True], outer=OUTERS[outer], args_for_call=lambda i: [X, odd(i)])


def returns_early_then_more(x: Tensor, flag: bool):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        if flag:
            return torch.mm(x, x)
        y = torch.mm(x, x.t())
    return y.float()


def breaks_in_scope(x: Tensor):
    for i in range(3):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            if i == 1:
                break
            x = torch.mm(x, x)
    return x


@pytest.mark.parametrize("fn, kind, marker", [
    (returns_early_then_more, "return", "return torch.mm(x, x)"),
    (breaks_in_scope, "break", "break"),
], ids=["return", "break"])
def test_early_exit_torchscript_cannot_compile_is_a_clear_error(fn, kind, marker):
    fn(X, True) if fn is returns_early_then_more else fn(X)  # eager runs it
    lines, start = inspect.getsourcelines(fn)
    line = start + next(i for i, text in enumerate(lines) if text.strip() == marker)
    with pytest.raises(RuntimeError, match=rf"leaves a `with` block early \(`{kind}` at .*test_early_exit.py:{line}, "
                                           rf"in {fn.__name__}\)"):
        oracle.script(fn)
