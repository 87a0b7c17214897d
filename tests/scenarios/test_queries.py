"""Autocast queries (is_autocast_enabled, get_autocast_dtype) in scripted code."""
import pytest
import torch
from torch import Tensor

from oracle import check_against_eager, cpu_autocast
from scenario_helpers import OUTERS, OUTER_IDS, WARNING_FILTERS, X, odd

pytestmark = WARNING_FILTERS


def query_state(x: Tensor):
    a0 = torch.is_autocast_cpu_enabled()
    b0 = torch.is_autocast_enabled()
    d0 = torch.zeros(1, dtype=torch.get_autocast_dtype("cpu"))
    with torch.autocast("cpu", dtype=torch.float16):
        a1 = torch.is_autocast_cpu_enabled()
        b1 = torch.is_autocast_enabled()
        d1 = torch.zeros(1, dtype=torch.get_autocast_dtype("cpu"))
        with torch.autocast("cpu", enabled=False):
            a2 = torch.is_autocast_cpu_enabled()
            d2 = torch.zeros(1, dtype=torch.get_autocast_dtype("cpu"))
        with torch.autocast("cuda"):
            b2 = torch.is_autocast_enabled()
            a3 = torch.is_autocast_cpu_enabled()
    a4 = torch.is_autocast_cpu_enabled()
    return a0, b0, d0, a1, b1, d1, a2, d2, b2, a3, a4


@pytest.mark.parametrize("outer", OUTER_IDS)
def test_query_state(outer):
    check_against_eager(query_state, [X], outer=OUTERS[outer])


def test_query_state_dynamic():
    def query_state_dynamic(x: Tensor, flag: bool):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=flag):
            a = torch.is_autocast_cpu_enabled()
            z = torch.mm(x, x)
        return a, z, torch.is_autocast_cpu_enabled()

    check_against_eager(query_state_dynamic, [X, True], outer=cpu_autocast(torch.float16),
                        args_for_call=lambda i: [X, odd(i)])


def test_eager_queries_sanity():
    # A check of eager itself (the oracle): the queries move with the scope.
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert torch.is_autocast_cpu_enabled()
        with torch.autocast("cpu", enabled=False):
            assert not torch.is_autocast_cpu_enabled()
    assert not torch.is_autocast_cpu_enabled()
