"""The spellings of the autocast context manager and its arguments."""
import pytest
import torch
from torch import Tensor

from oracle import check_against_eager, cpu_autocast
from scenario_helpers import OUTERS, WARNING_FILTERS, X, Y, outer_cache_off

pytestmark = WARNING_FILTERS


# Each spelling's body has a lower-precision op (mm), an fp32-policy op
# (cdist), a promote op (cat) and an op after the scope (type promotion of a
# mixed add).


def sp_autocast_cpu_default(x: Tensor, y: Tensor):
    with torch.autocast("cpu"):
        z = torch.mm(x, y)
        c = torch.cdist(z, y)
        s = torch.cat([z, x])
    return z, c, s, z + x


def sp_autocast_cpu_bf16(x: Tensor, y: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        z = torch.mm(x, y)
        c = torch.cdist(z, y)
        s = torch.cat([z, x])
    return z, c, s, z + x


def sp_autocast_cpu_fp16(x: Tensor, y: Tensor):
    with torch.autocast("cpu", dtype=torch.float16):
        z = torch.mm(x, y)
        c = torch.cdist(z, y)
        s = torch.cat([z, x])
    return z, c, s, z + x


def sp_autocast_kw_device_type(x: Tensor, y: Tensor):
    with torch.autocast(device_type="cpu", dtype=torch.float16):
        z = torch.mm(x, y)
        c = torch.cdist(z, y)
        s = torch.cat([z, x])
    return z, c, s, z + x


def sp_amp_autocast_bf16(x: Tensor, y: Tensor):
    with torch.amp.autocast("cpu", dtype=torch.bfloat16):
        z = torch.mm(x, y)
        c = torch.cdist(z, y)
        s = torch.cat([z, x])
    return z, c, s, z + x


def sp_amp_autocast_fp16(x: Tensor, y: Tensor):
    with torch.amp.autocast("cpu", dtype=torch.float16):
        z = torch.mm(x, y)
        c = torch.cdist(z, y)
        s = torch.cat([z, x])
    return z, c, s, z + x


def sp_amp_autocast_default(x: Tensor, y: Tensor):
    with torch.amp.autocast("cpu"):
        z = torch.mm(x, y)
        c = torch.cdist(z, y)
        s = torch.cat([z, x])
    return z, c, s, z + x


def sp_cpu_amp_default(x: Tensor, y: Tensor):
    with torch.cpu.amp.autocast():
        z = torch.mm(x, y)
        c = torch.cdist(z, y)
        s = torch.cat([z, x])
    return z, c, s, z + x


def sp_cpu_amp_bf16(x: Tensor, y: Tensor):
    with torch.cpu.amp.autocast(dtype=torch.bfloat16):
        z = torch.mm(x, y)
        c = torch.cdist(z, y)
        s = torch.cat([z, x])
    return z, c, s, z + x


def sp_cpu_amp_fp16(x: Tensor, y: Tensor):
    with torch.cpu.amp.autocast(dtype=torch.float16):
        z = torch.mm(x, y)
        c = torch.cdist(z, y)
        s = torch.cat([z, x])
    return z, c, s, z + x


def sp_cpu_amp_fp16_cache_false(x: Tensor, y: Tensor):
    with torch.cpu.amp.autocast(dtype=torch.float16, cache_enabled=False):
        z = torch.mm(x, y)
        c = torch.cdist(z, y)
        s = torch.cat([z, x])
    return z, c, s, z + x


def sp_cpu_amp_disabled(x: Tensor, y: Tensor):
    with torch.cpu.amp.autocast(enabled=False):
        z = torch.mm(x, y)
        c = torch.cdist(z, y)
        s = torch.cat([z, x])
    return z, c, s, z + x


def sp_cuda_amp_default(x: Tensor, y: Tensor):
    with torch.cuda.amp.autocast():
        z = torch.mm(x, y)
        c = torch.cdist(z, y)
        s = torch.cat([z, x])
    return z, c, s, z + x


def sp_cuda_amp_bf16(x: Tensor, y: Tensor):
    with torch.cuda.amp.autocast(dtype=torch.bfloat16):
        z = torch.mm(x, y)
        c = torch.cdist(z, y)
        s = torch.cat([z, x])
    return z, c, s, z + x


def sp_cuda_amp_fp16_cache_false(x: Tensor, y: Tensor):
    with torch.cuda.amp.autocast(dtype=torch.float16, cache_enabled=False):
        z = torch.mm(x, y)
        c = torch.cdist(z, y)
        s = torch.cat([z, x])
    return z, c, s, z + x


def sp_autocast_cuda(x: Tensor, y: Tensor):
    with torch.autocast("cuda"):
        z = torch.mm(x, y)
        c = torch.cdist(z, y)
        s = torch.cat([z, x])
    return z, c, s, z + x


def sp_autocast_cuda_bf16(x: Tensor, y: Tensor):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        z = torch.mm(x, y)
        c = torch.cdist(z, y)
        s = torch.cat([z, x])
    return z, c, s, z + x


def sp_amp_autocast_cuda_fp16(x: Tensor, y: Tensor):
    with torch.amp.autocast("cuda", dtype=torch.float16):
        z = torch.mm(x, y)
        c = torch.cdist(z, y)
        s = torch.cat([z, x])
    return z, c, s, z + x


def sp_cache_true_bf16(x: Tensor, y: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16, cache_enabled=True):
        z = torch.mm(x, y)
        c = torch.cdist(z, y)
        s = torch.cat([z, x])
    return z, c, s, z + x


def sp_cache_false_bf16(x: Tensor, y: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16, cache_enabled=False):
        z = torch.mm(x, y)
        c = torch.cdist(z, y)
        s = torch.cat([z, x])
    return z, c, s, z + x


def sp_cache_true_fp16(x: Tensor, y: Tensor):
    with torch.autocast("cpu", dtype=torch.float16, cache_enabled=True):
        z = torch.mm(x, y)
        c = torch.cdist(z, y)
        s = torch.cat([z, x])
    return z, c, s, z + x


def sp_cache_false_fp16(x: Tensor, y: Tensor):
    with torch.amp.autocast("cpu", dtype=torch.float16, cache_enabled=False):
        z = torch.mm(x, y)
        c = torch.cdist(z, y)
        s = torch.cat([z, x])
    return z, c, s, z + x


def sp_cache_none(x: Tensor, y: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16, cache_enabled=None):
        z = torch.mm(x, y)
        c = torch.cdist(z, y)
        s = torch.cat([z, x])
    return z, c, s, z + x


def sp_enabled_false(x: Tensor, y: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=False):
        z = torch.mm(x, y)
        c = torch.cdist(z, y)
        s = torch.cat([z, x])
    return z, c, s, z + x


def sp_enabled_true_kw_all(x: Tensor, y: Tensor):
    with torch.autocast(device_type="cpu", dtype=torch.float16, enabled=True, cache_enabled=False):
        z = torch.mm(x, y)
        c = torch.cdist(z, y)
        s = torch.cat([z, x])
    return z, c, s, z + x


def sp_unsupported_dtype_fp32(x: Tensor, y: Tensor):
    # eager warns "target dtype is not supported" and disables the scope
    with torch.autocast("cpu", dtype=torch.float32):
        z = torch.mm(x, y)
        c = torch.cdist(z, y)
        s = torch.cat([z, x])
    return z, c, s, z + x


SPELLINGS = [
    sp_autocast_cpu_default, sp_autocast_cpu_bf16, sp_autocast_cpu_fp16,
    sp_autocast_kw_device_type, sp_amp_autocast_bf16, sp_amp_autocast_fp16,
    sp_amp_autocast_default, sp_cpu_amp_default, sp_cpu_amp_bf16,
    sp_cpu_amp_fp16, sp_cpu_amp_fp16_cache_false, sp_cpu_amp_disabled,
    sp_cuda_amp_default, sp_cuda_amp_bf16, sp_cuda_amp_fp16_cache_false,
    sp_autocast_cuda, sp_autocast_cuda_bf16, sp_amp_autocast_cuda_fp16,
    sp_cache_true_bf16, sp_cache_false_bf16, sp_cache_true_fp16,
    sp_cache_false_fp16, sp_cache_none, sp_enabled_false,
    sp_enabled_true_kw_all, sp_unsupported_dtype_fp32,
]


@pytest.mark.parametrize("fn", SPELLINGS, ids=[f.__name__ for f in SPELLINGS])
def test_spelling(fn):
    check_against_eager(fn, [X, Y])


# The same spellings under an outer eager autocast (the scripted scope must
# override / restore the eager state exactly like eager's own nested scope).
SPELLINGS_UNDER_OUTER = [
    sp_autocast_cpu_fp16, sp_amp_autocast_default, sp_cpu_amp_bf16,
    sp_cuda_amp_default, sp_autocast_cuda_bf16, sp_cache_false_bf16,
    sp_cache_none, sp_enabled_false, sp_unsupported_dtype_fp32,
]


@pytest.mark.parametrize("outer", ["outer_bf16", "outer_fp16", "outer_disabled"])
@pytest.mark.parametrize("fn", SPELLINGS_UNDER_OUTER, ids=[f.__name__ for f in SPELLINGS_UNDER_OUTER])
def test_spelling_under_outer(fn, outer):
    check_against_eager(fn, [X, Y], outer=OUTERS[outer])


@pytest.mark.parametrize("fn", [sp_cache_none, sp_autocast_cpu_fp16, sp_cache_true_bf16],
                         ids=["cache_none", "cache_default", "cache_true"])
def test_cache_flag_inherited_from_outer_eager_scope(fn):
    # cache_enabled=None / default resolves to the current flag (False here).
    check_against_eager(fn, [X, Y], outer=outer_cache_off)


def test_cache_enabled_with_grad():
    def cache_weight_reuse(w: Tensor, x: Tensor):
        # A leaf that requires grad is cast once and cached inside the scope.
        with torch.autocast("cpu", dtype=torch.bfloat16, cache_enabled=True):
            a = torch.mm(x, w)
            b = torch.mm(a.float(), w)
        with torch.autocast("cpu", dtype=torch.bfloat16, cache_enabled=False):
            c = torch.mm(x, w)
        return a, b, c

    check_against_eager(cache_weight_reuse, [X, Y], grad=True)


def test_empty_and_unused_scopes():
    def empty_and_unused_scopes(x: Tensor):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            pass
        with torch.autocast("cpu", dtype=torch.bfloat16):
            unused = torch.mm(x, x)  # noqa: F841  (dead code)
        return x * 2

    check_against_eager(empty_and_unused_scopes, [X], outer=cpu_autocast(torch.float16))
