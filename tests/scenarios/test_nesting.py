"""Nested autocast scopes."""
import pytest
import torch
import torch.nn as nn
from torch import Tensor

import oracle
from oracle import check_against_eager
from scenario_helpers import OUTERS, WARNING_FILTERS, X, Y, rand

pytestmark = WARNING_FILTERS


def nest_disabled_in_enabled(x: Tensor, y: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        a = torch.mm(x, y)
        with torch.autocast("cpu", enabled=False):
            b = torch.mm(x, y)
            c = torch.mm(a.float(), y)
        d = torch.mm(b, y)
    return a, b, c, d


def nest_enabled_in_disabled(x: Tensor, y: Tensor):
    with torch.autocast("cpu", enabled=False):
        a = torch.mm(x, y)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            b = torch.mm(x, y)
        c = torch.mm(a, y)
    return a, b, c


def nest_bf16_in_fp16(x: Tensor, y: Tensor):
    with torch.autocast("cpu", dtype=torch.float16):
        a = torch.mm(x, y)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            b = torch.mm(x, y)
            s = torch.cat([b, x])
        c = torch.mm(x, y)
    return a, b, s, c


def nest_fp16_in_bf16(x: Tensor, y: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        a = torch.mm(x, y)
        with torch.autocast("cpu", dtype=torch.float16):
            b = torch.mm(x, y)
            s = torch.stack([b.float(), x])
        c = torch.mm(x, y)
    return a, b, s, c


def nest_cpu_in_cuda(x: Tensor, y: Tensor):
    with torch.autocast("cuda"):
        a = torch.mm(x, y)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            b = torch.mm(x, y)
        c = torch.mm(x, y)
    return a, b, c


def nest_cuda_in_cpu(x: Tensor, y: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        a = torch.mm(x, y)
        with torch.cuda.amp.autocast():
            b = torch.mm(x, y)
        c = torch.mm(x, y)
    return a, b, c


def nest_three_deep(x: Tensor, y: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        a = torch.mm(x, y)
        with torch.autocast("cpu", dtype=torch.float16, cache_enabled=False):
            b = torch.mm(x, y)
            with torch.autocast("cpu", enabled=False):
                c = torch.mm(x, y)
            d = torch.mm(x, y)
        e = torch.mm(x, y)
    return a, b, c, d, e


def nest_same_dtype_twice(x: Tensor, y: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            a = torch.mm(x, y)
        b = torch.mm(x, y)
    return a, b


def nest_sequential(x: Tensor, y: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        a = torch.mm(x, y)
    b = torch.mm(x, y)
    with torch.autocast("cpu", dtype=torch.float16):
        c = torch.mm(x, y)
    return a, b, c


def nest_multi_item_with(x: Tensor, y: Tensor):
    with torch.autocast("cpu", dtype=torch.float16), torch.autocast("cpu", dtype=torch.bfloat16):
        a = torch.mm(x, y)
    return a


NESTED = [
    nest_disabled_in_enabled, nest_enabled_in_disabled, nest_bf16_in_fp16,
    nest_fp16_in_bf16, nest_cpu_in_cuda, nest_cuda_in_cpu, nest_three_deep,
    nest_same_dtype_twice, nest_sequential, nest_multi_item_with,
]


@pytest.mark.parametrize("outer", ["no_outer", "outer_fp16"])
@pytest.mark.parametrize("fn", NESTED, ids=[f.__name__ for f in NESTED])
def test_nested(fn, outer):
    check_against_eager(fn, [X, Y], outer=OUTERS[outer])


class StaleCacheModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(rand(4, 4, seed=6))

    def forward(self, x: Tensor):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            b = torch.mm(x, self.w)
            with torch.autocast("cpu", dtype=torch.float16):
                c = torch.mm(x, self.w)
        return b, c


@pytest.mark.parametrize("outer", ["no_outer", "outer_fp16", "outer_bf16"])
@pytest.mark.parametrize("grad", [True, False], ids=["x_and_w_leaves", "w_leaf_only"])
def test_nested_dtype_stale_weight_cache(grad, outer):
    """Eager's weight-cast cache is keyed by the tensor alone: inside the
    float16 scope nested in the bfloat16 one (cache on), eager's mm gets the
    bfloat16 cast of every leaf that requires grad made outside. With x and
    w both leaves it returns bfloat16; with only the parameter w cached it
    raises "expected m1 and m2 to have the same dtype". jitamp's casts hand
    the op's kernel the tensor whenever the cache holds another dtype's cast
    (cast_ops.cpp, cachedCast), so the kernel meets the entry as eager's
    does. (Before: the op got the stale cast, and its kernel cast it again
    to float16.)"""
    m = StaleCacheModule()
    check_against_eager(m, [X], scripted=oracle.script(m), grad=grad, outer=OUTERS[outer])


class StaleCacheAcrossGradModes(nn.Module):
    """The float16 scope's cast of w made with grad mode off (`no_grad`), then
    w met under the bfloat16 scope with grad mode on or off."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(rand(4, 4, seed=6))

    def forward(self, x: Tensor, later_grad: bool):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            with torch.no_grad():
                with torch.autocast("cpu", dtype=torch.float16):
                    a = torch.mm(x, self.w)
            if later_grad:
                b = torch.mm(x, self.w)
            else:
                with torch.no_grad():
                    b = torch.mm(x, self.w)
        return a, b


@pytest.mark.parametrize("outer", ["no_outer", "outer_fp16", "outer_bf16"])
@pytest.mark.parametrize("mode", ["no_grad", "grad"])
def test_nested_dtype_stale_weight_cache_with_grad_mode_off(mode, outer):
    """With grad mode off jitamp copies a weight's first cast in a region
    without eager's cache (UncachedCasts); eager's cache keeps it, and hands
    it to the weight's next use under a scope of another dtype (either grad
    mode). That use gets it from eager's cache as eager's does
    (keepInEagerCache; fuzz seed 1327, index 10908)."""
    if mode == "no_grad":
        m = StaleCacheModule()
        check_against_eager(m, [X], scripted=oracle.script(m), outer=oracle.no_grad_under(OUTERS[outer]))
    else:
        m = StaleCacheAcrossGradModes()
        check_against_eager(m, [X, True], scripted=oracle.script(m), outer=OUTERS[outer],
                            args_for_call=lambda i: [X, i % 2 == 1])
