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
    check_against_eager(ac_as_and_reenter, [X, Y])


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
