"""Input dtypes, also changing between calls, and the promote policy
(cat / stack of mixed dtypes)."""
from typing import List

import pytest
import torch
from torch import Tensor

from oracle import check_against_eager
from scenario_helpers import WARNING_FILTERS, X, Y, rand

pytestmark = WARNING_FILTERS


# Input dtypes

def dt_ops(x: Tensor, y: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        a = torch.mm(x, y)
        b = torch.matmul(x, y)
        c = torch.cat([x, y])
        d = x + y
    return a, b, c, d


def dt_fp32_ops(x: Tensor, y: Tensor):
    with torch.autocast("cpu", dtype=torch.float16):
        c = torch.cdist(x, y)
        p = torch.prod(x)
    return c, p


def dt_mixed_mm(x: Tensor, y: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        a = torch.mm(x, y)
    return a


DTYPES = [torch.bfloat16, torch.float16, torch.float64, torch.int64, torch.int32, torch.complex64]


@pytest.mark.parametrize("dtype", DTYPES, ids=[str(d).split(".")[1] for d in DTYPES])
@pytest.mark.parametrize("fn", [dt_ops, dt_fp32_ops], ids=["lower_promote", "fp32"])
def test_input_dtypes(fn, dtype):
    x = (X * 3).to(dtype)
    y = (Y * 3).to(dtype)
    check_against_eager(fn, [x, y])


MIXED = [
    (torch.float32, torch.bfloat16), (torch.float16, torch.float32),
    (torch.float64, torch.float32), (torch.float64, torch.bfloat16),
    (torch.float16, torch.bfloat16), (torch.int64, torch.float32),
]


@pytest.mark.parametrize("dts", MIXED, ids=[f"{a}-{b}".replace("torch.", "") for a, b in MIXED])
def test_mixed_input_dtypes_mm(dts):
    check_against_eager(dt_mixed_mm, [X.to(dts[0]), Y.to(dts[1])])


# Input dtypes and shapes that change between calls

def dyn_input_types(x: Tensor, y: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        a = torch.mm(x, y)
        b = torch.cat([a, x])
    return a, b, a + 1


_CYCLE = [torch.float32, torch.bfloat16, torch.float64, torch.float16, torch.float32, torch.int64]


def test_input_dtype_changes_between_calls():
    # The profiling executor specializes on the dtypes it saw; the casts
    # must still follow eager when they change.
    check_against_eager(dyn_input_types, [X, Y],
                        args_for_call=lambda i: [X.to(_CYCLE[i % 6]), Y.to(_CYCLE[i % 6])])


def test_mixed_input_dtypes_change_between_calls():
    check_against_eager(dyn_input_types, [X, Y],
                        args_for_call=lambda i: [X.to(_CYCLE[i % 6]), Y.to(_CYCLE[(i + 1) % 6])])


def test_input_shapes_change_between_calls():
    shapes = [(4, 4), (2, 3), (5, 1)]

    def args(i):
        r, c = shapes[i % 3]
        return [rand(r, c, seed=i), rand(c, c, seed=100 + i)]
    # Each call has other shapes than the one before (calls 1 to 10).
    check_against_eager(dyn_input_types, [X, Y], args_for_call=args)


# The promote policy: cat / stack of mixed dtypes

def cat_mixed(a: Tensor, b: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        c = torch.cat([a, b])
        s = torch.stack([a, b])
        c1 = torch.cat([torch.mm(a.float(), a.float()), b], dim=1)
    return c, s, c1


def cat_mixed_fp16_scope(a: Tensor, b: Tensor):
    with torch.autocast("cpu", dtype=torch.float16):
        c = torch.cat([a, b])
        s = torch.stack([a, b], dim=1)
    return c, s


def cat_list_built_in_loop(x: Tensor, y: Tensor, n: int):
    parts: List[Tensor] = []
    with torch.autocast("cpu", dtype=torch.bfloat16):
        for i in range(n):
            parts.append(torch.mm(x, y) if i % 2 == 0 else x)
        c = torch.cat(parts)
        s = torch.stack(parts)
    return c, s


def cat_single(x: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        c = torch.cat([x])
    return c


CAT_PAIRS = [
    (torch.float32, torch.bfloat16), (torch.bfloat16, torch.float32),
    (torch.float16, torch.bfloat16), (torch.bfloat16, torch.float16),
    (torch.bfloat16, torch.bfloat16), (torch.float16, torch.float16),
    (torch.float64, torch.bfloat16), (torch.int64, torch.bfloat16),
    (torch.float32, torch.float64),
]


@pytest.mark.parametrize("dts", CAT_PAIRS, ids=[f"{a}-{b}".replace("torch.", "") for a, b in CAT_PAIRS])
@pytest.mark.parametrize("fn", [cat_mixed, cat_mixed_fp16_scope], ids=["bf16_scope", "fp16_scope"])
def test_cat_stack_mixed(fn, dts):
    check_against_eager(fn, [(X * 3).to(dts[0]), (Y * 3).to(dts[1])])


def test_cat_list_built_in_loop():
    check_against_eager(cat_list_built_in_loop, [X, Y, 3], args_for_call=lambda i: [X, Y, 1 + i % 4])


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.float64])
def test_cat_single(dtype):
    check_against_eager(cat_single, [X.to(dtype)])


def test_eager_cat_fp16_bf16_raises_sanity():
    # A check of eager itself: the promote policy rejects fp16 + bf16.
    with torch.autocast("cpu", dtype=torch.bfloat16):
        with pytest.raises(RuntimeError):
            torch.cat([X.half(), X.bfloat16()])
