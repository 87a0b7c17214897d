"""Calls from a scope: helpers, @torch.jit.script helpers, @torch.jit.ignore."""
from typing import Tuple

import pytest
import torch
from torch import Tensor

import oracle
from oracle import check_against_eager
from scenario_helpers import OUTERS, WARNING_FILTERS, X, Y

pytestmark = WARNING_FILTERS


# Scripted helpers (callees compiled with their caller)

def _helper_mm_cat(a: Tensor, b: Tensor) -> Tensor:
    return torch.cat([torch.mm(a, b), a])


def _helper_with_scope(a: Tensor, b: Tensor) -> Tensor:
    with torch.autocast("cpu", dtype=torch.float16):
        return torch.mm(a, b)


def _helper_disables(a: Tensor, b: Tensor) -> Tensor:
    with torch.autocast("cpu", enabled=False):
        r = torch.mm(a, b)
    return r


def helper_called_in_scope(x: Tensor, y: Tensor):
    a = _helper_mm_cat(x, y)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        b = _helper_mm_cat(x, y)
        c = _helper_with_scope(x, y)
        d = _helper_disables(x, y)
    e = _helper_with_scope(x, y)
    return a, b, c, d, e


@pytest.mark.parametrize("outer", ["no_outer", "outer_bf16", "outer_fp16"])
def test_helper_called_in_scope(outer):
    check_against_eager(helper_called_in_scope, [X, Y], outer=OUTERS[outer])


# @torch.jit.script helpers, decorated at import (without jitamp: the
# rewrite of a caller rewrites them before they ever run). The eager side
# must call plain-Python twins: calling a ScriptFunction from Python runs
# TorchScript, which would make the oracle compare jitamp with itself.
def _py_scripted_helper(a: Tensor, b: Tensor) -> Tensor:
    z = torch.mm(a, b)
    with torch.autocast("cpu", enabled=False):
        w = torch.mm(a, b)
    return torch.stack([z, w.to(z.dtype)]) + torch.cdist(a, b)


@torch.jit.script
def _jit_scripted_helper(a: Tensor, b: Tensor) -> Tensor:
    z = torch.mm(a, b)
    with torch.autocast("cpu", enabled=False):
        w = torch.mm(a, b)
    return torch.stack([z, w.to(z.dtype)]) + torch.cdist(a, b)


def jit_helper_eager(x: Tensor, y: Tensor):
    a = _py_scripted_helper(x, y)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        b = _py_scripted_helper(x, y)
    return a, b


def jit_helper_scripted(x: Tensor, y: Tensor):
    a = _jit_scripted_helper(x, y)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        b = _jit_scripted_helper(x, y)
    return a, b


@pytest.mark.parametrize("outer", ["no_outer", "outer_fp16"])
def test_jit_script_decorated_helper(outer):
    scripted = oracle.script(jit_helper_scripted)
    check_against_eager(jit_helper_eager, [X, Y], scripted=scripted, outer=OUTERS[outer])


# @torch.jit.ignore: Python called from a scope

@torch.jit.ignore
def _ignored_mm(a: Tensor, b: Tensor) -> Tensor:
    # runs in Python: eager autocast (the thread state jitamp set) applies
    return torch.mm(a, b)


@torch.jit.ignore
def _ignored_state() -> Tuple[bool, bool]:
    return torch.is_autocast_enabled("cpu"), torch.is_autocast_cache_enabled()


def ignore_in_scope(x: Tensor, y: Tensor):
    a = _ignored_mm(x, y)
    with torch.autocast("cpu", dtype=torch.bfloat16, cache_enabled=False):
        b = _ignored_mm(x, y)
        st = _ignored_state()
        with torch.autocast("cpu", enabled=False):
            c = _ignored_mm(x, y)
    return a, b, c, st, _ignored_state()


@pytest.mark.parametrize("outer", ["no_outer", "outer_fp16"])
def test_jit_ignore_in_scope(outer):
    check_against_eager(ignore_in_scope, [X, Y], outer=OUTERS[outer])
