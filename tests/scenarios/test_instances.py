"""`as ac`, re-entering an autocast object, conditionally chosen instances."""
from typing import List, Optional

import pytest
import torch
from torch import Tensor

import oracle
from oracle import check_against_eager
from scenario_helpers import OUTERS, WARNING_FILTERS, X, Y, odd

pytestmark = WARNING_FILTERS


def ac_as_and_reenter(x: Tensor, y: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16) as ac:
        a = torch.mm(x, y)
    b = torch.mm(x, y)
    with ac:
        c = torch.mm(x, y)
    d = torch.mm(x, y)
    return a, b, c, d


def ac_prebuilt_reenter(x: Tensor, y: Tensor):
    ac = torch.autocast("cpu", dtype=torch.float16)
    with ac:
        a = torch.mm(x, y)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        with ac:
            b = torch.mm(x, y)
        c = torch.mm(x, y)
    with ac:
        d = torch.mm(x, y)
    return a, b, c, d


def ac_reenter_in_loop(x: Tensor, y: Tensor):
    ac = torch.autocast("cpu", dtype=torch.bfloat16)
    outs: List[Tensor] = []
    for i in range(3):
        with ac:
            outs.append(torch.mm(x, y) * i)
        outs.append(torch.mm(x, y))
    return outs


def ac_conditional_enabled(x: Tensor, y: Tensor, flag: bool):
    ac = torch.autocast("cpu") if flag else torch.autocast("cpu", enabled=False)
    with ac:
        z = torch.mm(x, y)
    return z


def ac_conditional_dtype(x: Tensor, y: Tensor, flag: bool):
    if flag:
        ac = torch.autocast("cpu", dtype=torch.float16)
    else:
        ac = torch.autocast("cpu", dtype=torch.bfloat16, cache_enabled=False)
    with ac:
        z = torch.mm(x, y)
    with ac:
        w = torch.mm(x, y)
    return z, w


def ac_conditional_device(x: Tensor, y: Tensor, flag: bool):
    ac = torch.autocast("cpu", dtype=torch.bfloat16) if flag else torch.autocast("cuda")
    with ac:
        z = torch.mm(x, y)
    return z


def test_ac_as_and_reenter():
    # Before torch 2.5 eager's __enter__ returns None: `with ac:` raises
    # TypeError there, and must in the scripted code too.
    check_against_eager(ac_as_and_reenter, [X, Y])


def ac_as_attribute(x: Tensor, y: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16) as ac:
        a = torch.mm(x, y)
        if ac.fast_dtype == torch.bfloat16:
            a = a * 2
    return a


def _ac_helper(ac: torch.autocast, x: Tensor) -> Tensor:
    return x


def ac_as_passed_on(x: Tensor, y: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16) as ac:
        a = _ac_helper(ac, torch.mm(x, y))
    return a


@pytest.fixture
def eager_enter_returns_none(monkeypatch):
    """Simulates a torch whose eager autocast.__enter__ returns None (before
    2.5): tells the pass so, and makes `torch.autocast` in the eager runs an
    autocast whose __enter__ returns None. Yields a script function to call
    before the eager side changes."""
    from jitamp import _library

    class EnterReturnsNone(torch.autocast):
        def __enter__(self):
            super().__enter__()
            return None

    try:
        with None:  # type: ignore[attr-defined]
            pass
    except Exception as error:
        cls, message = type(error), str(error)
    _library._C.set_eager_enter_result(True, f"{cls.__module__}.{cls.__qualname__}", message)
    try:
        def script_then_switch_eager(fn):
            scripted = oracle.script(fn)
            monkeypatch.setattr(torch, "autocast", EnterReturnsNone)
            return scripted
        yield script_then_switch_eager
    finally:
        _library._tell_the_pass_what_eager_enter_returns()


@pytest.mark.parametrize("fn", [ac_as_and_reenter, ac_as_attribute], ids=["reenter", "attribute"])
def test_ac_as_where_eager_binds_none(fn, eager_enter_returns_none):
    scripted = eager_enter_returns_none(fn)
    with pytest.raises((TypeError, AttributeError)):  # eager itself
        fn(X, Y)
    check_against_eager(fn, [X, Y], scripted=scripted)


def test_ac_as_passed_on_where_eager_binds_none_is_refused(eager_enter_returns_none):
    with pytest.raises(RuntimeError, match=r"(?s)binds None.*ac = torch.autocast.*_ac_helper\(ac"):
        eager_enter_returns_none(ac_as_passed_on)


def test_ac_as_attribute():
    check_against_eager(ac_as_attribute, [X, Y])


@pytest.mark.parametrize("outer", ["no_outer", "outer_disabled"])
def test_ac_prebuilt_reenter(outer):
    check_against_eager(ac_prebuilt_reenter, [X, Y], outer=OUTERS[outer])


def test_ac_reenter_in_loop():
    check_against_eager(ac_reenter_in_loop, [X, Y])


@pytest.mark.parametrize("fn", [ac_conditional_enabled, ac_conditional_dtype, ac_conditional_device],
                         ids=["enabled", "dtype", "device"])
def test_ac_conditional_instance(fn):
    check_against_eager(fn, [X, Y, True], args_for_call=lambda i: [X, Y, odd(i)])


def test_ac_conditional_mixed_classes_is_a_torchscript_limitation():
    def ac_conditional_mixed_classes(x: Tensor, y: Tensor, flag: bool):
        ac = torch.autocast("cpu") if flag else torch.cpu.amp.autocast()
        with ac:
            z = torch.mm(x, y)
        return z

    # torch.autocast and torch.cpu.amp.autocast are different TorchScript
    # classes; the front end cannot unify the two branches of the ternary.
    # (Front-end limitation, not jitamp: plain torch.jit.script fails too.)
    with pytest.raises(RuntimeError, match="if-expression's true branch has type"):
        oracle.script(ac_conditional_mixed_classes)
    with pytest.raises(RuntimeError, match="if-expression's true branch has type"):
        torch.jit.script(ac_conditional_mixed_classes)


def test_ac_optional_instance():
    def ac_none_or_instance(x: Tensor, y: Tensor, flag: bool):
        ac: Optional[torch.autocast] = None
        if flag:
            ac = torch.autocast("cpu")
        z = torch.mm(x, y)
        if ac is not None:
            with ac:
                z = torch.mm(x, y)
        return z

    check_against_eager(ac_none_or_instance, [X, Y, True], args_for_call=lambda i: [X, Y, odd(i)])
