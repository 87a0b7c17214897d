"""Autocast queries in scripted code: every query eager offers (on the
installed torch), inside and outside scopes, under caller regions, each
answered as eager answers it."""
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


def every_query(x: Tensor, device: str):
    # dtypes through a tensor: TorchScript gives a ScalarType as an int
    return (
        torch.is_autocast_enabled(),
        torch.is_autocast_enabled(device),
        torch.is_autocast_cpu_enabled(),
        torch.zeros(1, dtype=torch.get_autocast_dtype(device)),
        torch.zeros(1, dtype=torch.get_autocast_cpu_dtype()),
        torch.zeros(1, dtype=torch.get_autocast_gpu_dtype()),
        torch.is_autocast_cache_enabled(),
        torch.amp.is_autocast_available(device),
        torch.amp.is_autocast_available("meta"),
    )


def all_queries(x: Tensor):
    a = every_query(x, "cpu")
    with torch.autocast("cpu", dtype=torch.float16, cache_enabled=False):
        b = every_query(x, "cpu")
        with torch.autocast("xpu", dtype=torch.bfloat16):
            c = every_query(x, "xpu")
            with torch.autocast("cpu", enabled=False):
                d = every_query(x, "cpu")
    return a, b, c, d, every_query(x, "cuda")


@pytest.mark.parametrize("outer", OUTER_IDS)
def test_every_query(outer):
    check_against_eager(all_queries, [X], outer=OUTERS[outer])


def test_every_query_under_an_eager_region_of_another_device():
    check_against_eager(all_queries, [X], outer=lambda: torch.autocast("xpu", dtype=torch.float16))


def test_query_with_a_device_of_the_call():
    def query_of(x: Tensor, device: str, flag: bool):
        with torch.autocast(device, dtype=torch.bfloat16, enabled=flag):
            return every_query(x, device)

    for device in ("cpu", "xpu", "hpu"):
        check_against_eager(query_of, [X, device, True], outer=cpu_autocast(torch.float16),
                            args_for_call=lambda i: [X, device, odd(i)])


@pytest.mark.parametrize("device", ["meta", "foo"])
def test_query_errors_are_eagers(device):
    def enabled_on(x: Tensor, device: str):
        return torch.is_autocast_enabled(device)

    def available(x: Tensor, device: str):
        return torch.amp.is_autocast_available(device)

    check_against_eager(enabled_on, [X, device])
    check_against_eager(available, [X, device])


def test_queries_script_without_jitamps_pass():
    # The ops are registered by jitamp's library: a function scripted while
    # jitamp is disabled uses them as TorchScript's own. (Called outside
    # any eager region: PyTorch's built-in JIT autocast pass, on while
    # jitamp is disabled, crashes on a graph with a query.) From jitamp's
    # first use on (here enable()): torch.amp.is_autocast_available, a
    # Python function, compiles to its op then (jitamp/_patches.py).
    import jitamp

    was = jitamp.is_enabled()
    jitamp.enable()
    jitamp.disable()
    try:
        scripted = torch.jit.script(every_query)
        got, want = scripted(X, "cpu"), every_query(X, "cpu")
    finally:
        if was:
            jitamp.enable()
    assert [g.dtype if isinstance(g, Tensor) else g for g in got] == \
        [w.dtype if isinstance(w, Tensor) else w for w in want]


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
