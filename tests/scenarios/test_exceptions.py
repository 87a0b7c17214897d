"""Exceptions inside scopes: eager's error, and the autocast state as it was."""
from typing import List

import pytest
import torch
from torch import Tensor

from oracle import check_against_eager
from scenario_helpers import OUTERS, WARNING_FILTERS, X, Y, odd, outer_cache_off, rand

pytestmark = WARNING_FILTERS


def exc_raise_in_scope(x: Tensor, y: Tensor, flag: bool):
    with torch.autocast("cpu", dtype=torch.bfloat16, cache_enabled=False):
        z = torch.mm(x, y)
        if flag:
            raise RuntimeError("boom")
    return z


def exc_shape_mismatch_nested(x: Tensor, y: Tensor):
    with torch.autocast("cpu", dtype=torch.float16):
        a = torch.mm(x, x)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            b = torch.mm(a, y)
    return a, b


def _helper_raises(a: Tensor, flag: bool) -> Tensor:
    with torch.autocast("cpu", enabled=False):
        if flag:
            raise ValueError("bad helper")
        r = torch.mm(a, a)
    return r


def exc_in_helper_in_scope(x: Tensor, flag: bool):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        a = torch.mm(x, x)
        b = _helper_raises(x, flag)
    return a, b


@pytest.mark.parametrize("outer", ["no_outer", "outer_fp16", "outer_disabled"])
def test_exc_raise_in_scope(outer):
    check_against_eager(exc_raise_in_scope, [X, Y, True], outer=OUTERS[outer],
                        args_for_call=lambda i: [X, Y, odd(i)])


@pytest.mark.parametrize("outer", ["no_outer", "outer_bf16"])
def test_exc_shape_mismatch_nested(outer):
    bad = rand(3, 5, seed=4)
    check_against_eager(exc_shape_mismatch_nested, [X, bad], outer=OUTERS[outer],
                        args_for_call=lambda i: [X, bad if odd(i) else Y])


@pytest.mark.parametrize("outer", ["no_outer", "outer_fp16"])
def test_exc_in_helper_in_scope(outer):
    check_against_eager(exc_in_helper_in_scope, [X, True], outer=OUTERS[outer],
                        args_for_call=lambda i: [X, odd(i)])


def test_exc_in_loop_in_scope():
    def exc_in_loop_in_scope(x: Tensor, n: int):
        outs: List[Tensor] = []
        with torch.autocast("cpu", dtype=torch.float16):
            for i in range(4):
                with torch.autocast("cpu", dtype=torch.bfloat16, enabled=i % 2 == 0):
                    if i == n:
                        raise RuntimeError("loop boom")
                    outs.append(torch.mm(x, x))
        return outs

    check_against_eager(exc_in_loop_in_scope, [X, 1], outer=OUTERS["outer_bf16"],
                        args_for_call=lambda i: [X, i % 5])


def test_exc_cuda_scope():
    def exc_cuda_scope(x: Tensor, flag: bool):
        with torch.autocast("cuda"):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                if flag:
                    raise RuntimeError("cuda boom")
                z = torch.mm(x, x)
        return z

    check_against_eager(exc_cuda_scope, [X, True], args_for_call=lambda i: [X, odd(i)])


def test_exc_then_normal_call_under_cache_off_outer():
    # Exception with an outer eager region whose cache flag is off: the flag
    # must come back too (the oracle compares it).
    check_against_eager(exc_raise_in_scope, [X, Y, True], outer=outer_cache_off,
                        args_for_call=lambda i: [X, Y, odd(i)])
