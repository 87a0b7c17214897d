"""Scripted code called inside an eager autocast region."""
import pytest
import torch
import torch.nn.functional as F
from torch import Tensor

import oracle
from oracle import check_against_eager, cpu_autocast
from scenario_helpers import OUTERS, OUTER_IDS, WARNING_FILTERS, X, Y

pytestmark = WARNING_FILTERS


def no_scope(x: Tensor, y: Tensor):
    z = torch.mm(x, y)
    c = torch.cdist(z, y)
    s = torch.cat([z, x])
    t = torch.stack([x, y])
    return z, c, s, t, F.linear(x, y), torch.matmul(x, y).relu()


def scope_disables(x: Tensor, y: Tensor):
    a = torch.mm(x, y)
    with torch.autocast("cpu", enabled=False):
        b = torch.mm(x, y)
        s = torch.cat([a, x])
    c = torch.mm(x, y)
    return a, b, s, c


def scope_other_dtype(x: Tensor, y: Tensor):
    a = torch.mm(x, y)
    with torch.autocast("cpu", dtype=torch.float16):
        b = torch.mm(x, y)
    c = torch.mm(x, y)
    return a, b, c


def scope_cuda_in_eager_cpu(x: Tensor, y: Tensor):
    with torch.autocast("cuda"):
        b = torch.mm(x, y)
    return b, torch.mm(x, y)


@pytest.mark.parametrize("outer", OUTER_IDS)
@pytest.mark.parametrize("fn", [no_scope, scope_disables, scope_other_dtype, scope_cuda_in_eager_cpu],
                         ids=["no_scope", "disables", "other_dtype", "cuda_scope"])
def test_scripted_in_eager_region(fn, outer):
    check_against_eager(fn, [X, Y], outer=OUTERS[outer])


def test_no_scope_in_eager_region_grad():
    check_against_eager(no_scope, [X, Y], outer=cpu_autocast(torch.bfloat16), grad=True)


def test_eager_region_changes_between_calls():
    # The same scripted function, alternately outside / inside an eager
    # autocast region of alternating dtype (the executor's plan is shared).
    scripted = oracle.script(no_scope)
    for outer in (None, cpu_autocast(torch.bfloat16), None, cpu_autocast(torch.float16),
                  cpu_autocast(torch.bfloat16, enabled=False)):
        check_against_eager(no_scope, [X, Y], scripted=scripted, outer=outer, calls=(1, 2))
