"""Control flow inside scopes and scopes inside control flow."""
from typing import List

import pytest
import torch
from torch import Tensor

from oracle import check_against_eager
from scenario_helpers import OUTERS, WARNING_FILTERS, X, Y, odd

pytestmark = WARNING_FILTERS


def cf_if_else_in_scope(x: Tensor, y: Tensor, flag: bool):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        if flag:
            z = torch.mm(x, y)
        else:
            z = torch.cdist(x, y)
        s = torch.cat([z, x])
    return z, s


def cf_scope_in_branch(x: Tensor, y: Tensor, flag: bool):
    if flag:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            z = torch.mm(x, y)
    else:
        with torch.autocast("cpu", dtype=torch.float16):
            z = torch.mm(x, y)
    return z, torch.mm(x, y)


def cf_for_in_scope(x: Tensor, y: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        z = x
        for _ in range(3):
            z = torch.mm(z, y)
    return z


def cf_scope_in_for(x: Tensor, y: Tensor):
    outs: List[Tensor] = []
    for i in range(4):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=i % 2 == 0):
            outs.append(torch.mm(x, y))
    return outs


def cf_while_in_scope(x: Tensor, y: Tensor):
    with torch.autocast("cpu", dtype=torch.float16):
        z = x
        i = 0
        while i < 3:
            z = torch.mm(z, y)
            i += 1
    return z


def cf_break_continue_in_scope(x: Tensor, y: Tensor, n: int):
    outs: List[Tensor] = []
    with torch.autocast("cpu", dtype=torch.bfloat16):
        for i in range(6):
            if i == 1:
                continue
            if i == n:
                break
            outs.append(torch.mm(x, y) + i)
    outs.append(torch.mm(x, y))
    return outs


def cf_break_continue_with_in_loop(x: Tensor, y: Tensor, n: int):
    outs: List[Tensor] = []
    for i in range(6):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            a = torch.mm(x, y)
            if i == 1:
                continue
            if i == n:
                break
            outs.append(a + i)
        outs.append(torch.mm(x, y))
    outs.append(torch.mm(x, y))
    return outs


def cf_while_break_in_with(x: Tensor, y: Tensor, n: int):
    outs: List[Tensor] = []
    i = 0
    while True:
        i += 1
        with torch.autocast("cpu", dtype=torch.float16):
            outs.append(torch.mm(x, y))
            if i >= n:
                break
        outs.append(torch.mm(x, y))
    return outs


def cf_return_inside_scope(x: Tensor, y: Tensor, flag: bool):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        z = torch.mm(x, y)
        if flag:
            return z
    return torch.mm(z.float(), y)


def test_cf_if_else_in_scope():
    check_against_eager(cf_if_else_in_scope, [X, Y, True], args_for_call=lambda i: [X, Y, odd(i)])


def test_cf_scope_in_branch():
    check_against_eager(cf_scope_in_branch, [X, Y, True], args_for_call=lambda i: [X, Y, odd(i)])


@pytest.mark.parametrize("outer", ["no_outer", "outer_fp16"])
def test_cf_for_in_scope(outer):
    check_against_eager(cf_for_in_scope, [X, Y], outer=OUTERS[outer])


def test_cf_scope_in_for():
    check_against_eager(cf_scope_in_for, [X, Y])


def test_cf_while_in_scope():
    check_against_eager(cf_while_in_scope, [X, Y])


@pytest.mark.parametrize("outer", ["no_outer", "outer_fp16"])
def test_cf_break_continue_in_scope(outer):
    check_against_eager(cf_break_continue_in_scope, [X, Y, 3], outer=OUTERS[outer],
                        args_for_call=lambda i: [X, Y, 2 + i % 4])


@pytest.mark.parametrize("outer", ["no_outer", "outer_fp16"])
def test_cf_break_continue_with_in_loop(outer):
    check_against_eager(cf_break_continue_with_in_loop, [X, Y, 3], outer=OUTERS[outer],
                        args_for_call=lambda i: [X, Y, 2 + i % 5])


def test_cf_while_break_in_with():
    check_against_eager(cf_while_break_in_with, [X, Y, 2], args_for_call=lambda i: [X, Y, 1 + i % 3])


@pytest.mark.parametrize("outer", ["no_outer", "outer_disabled"])
def test_cf_return_inside_scope(outer):
    check_against_eager(cf_return_inside_scope, [X, Y, True], outer=OUTERS[outer],
                        args_for_call=lambda i: [X, Y, odd(i)])
