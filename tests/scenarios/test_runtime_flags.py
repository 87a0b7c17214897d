"""enabled= / dtype= / cache_enabled= from arguments and computed values."""
import pytest
import torch
from torch import Tensor

from oracle import check_against_eager, cpu_autocast
from scenario_helpers import OUTERS, WARNING_FILTERS, X, Y, odd, rand

pytestmark = WARNING_FILTERS


def dyn_enabled_arg(x: Tensor, y: Tensor, flag: bool):
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=flag):
        z = torch.mm(x, y)
        s = torch.cat([z, x])
    return z, s


def dyn_enabled_numel(x: Tensor, y: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=x.numel() > 4):
        z = torch.mm(x, y)
    return z


def dyn_dtype_arg(x: Tensor, y: Tensor, dt: torch.dtype):
    with torch.autocast("cpu", dtype=dt):
        z = torch.mm(x, y)
        s = torch.cat([z, x])
    return z, s


def dyn_dtype_computed(x: Tensor, y: Tensor, flag: bool):
    dt = torch.float16 if flag else torch.bfloat16
    with torch.autocast("cpu", dtype=dt):
        z = torch.mm(x, y)
    return z


def dyn_dtype_and_enabled(x: Tensor, y: Tensor, dt: torch.dtype, flag: bool):
    with torch.autocast("cpu", dtype=dt, enabled=flag):
        z = torch.mm(x, y)
        c = torch.cdist(z, y)
    return z, c


def dyn_cache_arg(x: Tensor, y: Tensor, flag: bool):
    with torch.autocast("cpu", dtype=torch.bfloat16, cache_enabled=flag):
        z = torch.mm(x, y)
    return z


def dyn_cuda_enabled_arg(x: Tensor, y: Tensor, flag: bool):
    with torch.autocast("cuda", enabled=flag):
        a = torch.mm(x, y)
        with torch.autocast("cpu", enabled=not flag):
            b = torch.mm(x, y)
    return a, b


def dyn_enabled_from_tensor_value(x: Tensor, y: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bool(x.sum() > 0)):
        z = torch.mm(x, y)
    return z


def test_dyn_enabled_arg():
    check_against_eager(dyn_enabled_arg, [X, Y, True], args_for_call=lambda i: [X, Y, odd(i)])


def test_dyn_enabled_arg_under_outer():
    check_against_eager(dyn_enabled_arg, [X, Y, True], outer=cpu_autocast(torch.float16),
                        args_for_call=lambda i: [X, Y, odd(i)])


def test_dyn_enabled_numel():
    small = rand(2, 2, seed=3)
    check_against_eager(dyn_enabled_numel, [X, Y],
                        args_for_call=lambda i: [X, Y] if odd(i) else [small, small])


def test_dyn_dtype_arg():
    check_against_eager(dyn_dtype_arg, [X, Y, torch.bfloat16],
                        args_for_call=lambda i: [X, Y, torch.float16 if odd(i) else torch.bfloat16])


def test_dyn_dtype_arg_unsupported_dtype():
    # float32 / float64: eager warns and disables the scope
    dts = [torch.bfloat16, torch.float32, torch.float16, torch.float64]
    check_against_eager(dyn_dtype_arg, [X, Y, torch.bfloat16],
                        args_for_call=lambda i: [X, Y, dts[i % 4]])


def test_dyn_dtype_computed():
    check_against_eager(dyn_dtype_computed, [X, Y, True], args_for_call=lambda i: [X, Y, odd(i)])


def test_dyn_dtype_and_enabled():
    combos = [(torch.bfloat16, True), (torch.float16, False), (torch.float16, True), (torch.bfloat16, False)]
    check_against_eager(dyn_dtype_and_enabled, [X, Y, torch.bfloat16, True],
                        args_for_call=lambda i: [X, Y, *combos[i % 4]])


def test_dyn_cache_arg():
    check_against_eager(dyn_cache_arg, [X, Y, True], grad=True,
                        args_for_call=lambda i: [X, Y, odd(i)])


def test_dyn_cuda_enabled_arg():
    check_against_eager(dyn_cuda_enabled_arg, [X, Y, True], args_for_call=lambda i: [X, Y, odd(i)])


def test_dyn_enabled_from_tensor_value():
    check_against_eager(dyn_enabled_from_tensor_value, [X, Y],
                        args_for_call=lambda i: [X if odd(i) else -X.abs(), Y])


@pytest.mark.parametrize("outer", ["no_outer", "outer_bf16", "outer_disabled"])
def test_dyn_enabled_from_query(outer):
    def dyn_enabled_from_query(x: Tensor, y: Tensor):
        # enabled= depends on the state the caller's eager region set
        with torch.autocast("cpu", dtype=torch.float16, enabled=not torch.is_autocast_cpu_enabled()):
            r = torch.mm(x, y)
        return r

    check_against_eager(dyn_enabled_from_query, [X, Y], outer=OUTERS[outer])


@torch.jit.ignore
def _set_cache_flag(on: bool) -> None:
    torch.set_autocast_cache_enabled(on)


@torch.jit.ignore
def _cache_flag() -> bool:
    return torch.is_autocast_cache_enabled()


def cache_flag_read_where_the_object_is_made(x: Tensor, y: Tensor, flag: bool):
    ac = torch.autocast("cpu", dtype=torch.bfloat16)
    _set_cache_flag(flag)
    with ac:
        z = torch.mm(x, y)
        inside = _cache_flag()
    _set_cache_flag(True)
    return z, inside


def test_cache_flag_read_where_the_object_is_made():
    """cache_enabled=None is the thread's flag when the object is made
    (eager's __init__), not when its scope is entered: the plans enter
    from the object's values (UseScopeOpsOfPlans), the flag as evaluated
    there. Called with the flag turned off in between, then on."""
    check_against_eager(cache_flag_read_where_the_object_is_made, [X, Y, False],
                        args_for_call=lambda i: [X, Y, odd(i)])
