"""`@torch.autocast(...)` as a decorator: on a helper called from scripted
code (disabling and enabling), on the scripted function itself, stacked, and
on a module's forward -- each as if its body were inside the same
`with torch.autocast(...)` (jitamp/_decorators.py)."""
import warnings

import pytest
import torch
from torch import Tensor, nn

import jitamp
import oracle
from oracle import check_against_eager
from scenario_helpers import OUTERS, WARNING_FILTERS, X, Y

pytestmark = WARNING_FILTERS


@torch.autocast("cpu", enabled=False)
def _helper_disabled(x: Tensor, y: Tensor) -> Tensor:
    return torch.mm(x, y)


@torch.autocast("cpu", dtype=torch.bfloat16)
def _helper_bf16(x: Tensor, y: Tensor) -> Tensor:
    return torch.mm(x, y)


with warnings.catch_warnings():  # the deprecated spelling warns when built
    warnings.simplefilter("ignore", FutureWarning)

    @torch.cpu.amp.autocast(dtype=torch.float16)
    def _helper_old_spelling(x: Tensor, y: Tensor) -> Tensor:
        return torch.mm(x, y)


def calls_disabling_helper_in_scope(x: Tensor, y: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        a = torch.mm(x, y)
        b = _helper_disabled(x, y)
        c = torch.mm(x, y)
    return a, b, c


def calls_enabling_helper(x: Tensor, y: Tensor):
    return torch.mm(x, y), _helper_bf16(x, y)


# With _helper_bf16 on the same leaves, eager's cast cache hands the float16
# scope the bfloat16 casts (test_nesting.py::test_nested_dtype_stale_weight_cache).
def calls_old_spelling_helper(x: Tensor, y: Tensor):
    return torch.mm(x, y), _helper_old_spelling(x, y)


def calls_helpers_of_two_dtypes(x: Tensor, y: Tensor):
    return _helper_bf16(x, y), _helper_old_spelling(x, y)


@torch.autocast("cpu", dtype=torch.bfloat16)
def decorated_itself(x: Tensor, y: Tensor):
    return torch.mm(x, y), torch.softmax(x, dim=-1)


@torch.autocast("cpu", dtype=torch.bfloat16)
@torch.autocast("cpu", dtype=torch.float16)
def decorated_twice(x: Tensor, y: Tensor):
    return torch.mm(x, y)


@torch.autocast("cpu", enabled=False)
def decorated_with_scope_inside(x: Tensor, y: Tensor):
    a = torch.mm(x, y)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        b = torch.mm(x, y)
    return a, b


FUNCTIONS = [calls_disabling_helper_in_scope, calls_enabling_helper, calls_old_spelling_helper,
             calls_helpers_of_two_dtypes, decorated_itself, decorated_twice, decorated_with_scope_inside]


@pytest.mark.parametrize("outer", ["no_outer", "outer_bf16", "outer_fp16", "outer_disabled"])
@pytest.mark.parametrize("fn", FUNCTIONS, ids=[f.__name__ for f in FUNCTIONS])
def test_decorated(fn, outer):
    # With gradients, X and Y are leaves: under an eager region of another
    # dtype, eager's cast cache hands the decorator's scope the region's
    # casts of them (test_nesting.py::test_nested_dtype_stale_weight_cache).
    check_against_eager(fn, [X, Y], outer=OUTERS[outer], grad=True)


class DecoratedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(4, 8), nn.Linear(8, 4)

    @torch.autocast("cpu", dtype=torch.bfloat16)
    def forward(self, x):
        return self.b(torch.relu(self.a(x))), self.helper(x)

    @torch.jit.export
    @torch.autocast("cpu", enabled=False)
    def helper(self, x):
        return self.a(x)


@pytest.mark.parametrize("outer", ["no_outer", "outer_fp16"])
def test_decorated_forward_and_method(outer):
    m = DecoratedForward()
    scripted = oracle.script(m)
    check_against_eager(m, [X], scripted=scripted, outer=OUTERS[outer], grad=True)
    check_against_eager(m.helper, [X], scripted=scripted.helper, outer=OUTERS[outer], grad=True)


def test_without_jitamp_torchscript_refuses_as_before():
    assert not jitamp.is_enabled()
    with oracle.torchscript_deprecation_ignored(), pytest.raises(RuntimeError, match="decorator is not supported"):
        torch.jit.script(decorated_itself)


def test_disable_puts_torch_back():
    script, parse_def = torch.jit.script, torch.jit.frontend.parse_def
    with jitamp.enable():
        assert torch.jit.script is not script and torch.jit.frontend.parse_def is not parse_def
    assert torch.jit.script is script and torch.jit.frontend.parse_def is parse_def


# Eager builds a decorator's autocast object once, when it decorates: a
# dtype or cache flag left out is the one current then (bfloat16 and True at
# import), not the caller's when the function runs.
@torch.autocast("cpu")
def decorated_without_dtype(x: Tensor, y: Tensor):
    return torch.addmm(x, x, y), torch.mm(x, x)


def calls_it_with_cache_off(x: Tensor, y: Tensor, flag: bool):
    with torch.autocast("cpu", dtype=torch.float16, enabled=flag, cache_enabled=flag):
        return decorated_without_dtype(x, y)


@pytest.mark.parametrize("outer", ["no_outer", "outer_fp16"])
def test_decorator_dtype_and_cache_flag_are_those_of_decoration(outer):
    check_against_eager(decorated_without_dtype, [X, Y], outer=OUTERS[outer], grad=outer == "no_outer")
    # Call 2 turns the cache off around the decorated function: eager's
    # object keeps its own flag (on), so x is cast once for its three uses.
    check_against_eager(calls_it_with_cache_off, [X, Y, True], outer=OUTERS[outer],
                        args_for_call=lambda i: [X, Y, i % 2 == 1], grad=outer == "no_outer")
