"""scaled_dot_product_attention in a scope."""
from typing import Optional

import pytest
import torch
import torch.nn.functional as F
from torch import Tensor

from oracle import check_against_eager, cpu_autocast
from scenario_helpers import WARNING_FILTERS, odd, rand

pytestmark = WARNING_FILTERS


def sdpa_plain(q: Tensor, k: Tensor, v: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        o = F.scaled_dot_product_attention(q, k, v)
    return o


def sdpa_causal(q: Tensor, k: Tensor, v: Tensor):
    with torch.autocast("cpu", dtype=torch.float16):
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return o


def sdpa_float_mask(q: Tensor, k: Tensor, v: Tensor, mask: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    return o


def sdpa_optional_mask(q: Tensor, k: Tensor, v: Tensor, mask: Optional[Tensor]):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=0.5)
    return o


_Q, _K, _V = (rand(2, 2, 5, 8, seed=s) for s in (20, 21, 22))
_FMASK = rand(5, 5, seed=23)
_BMASK = rand(5, 5, seed=24) > 0


@pytest.mark.parametrize("grad", [False, True], ids=["nograd", "grad"])
def test_sdpa(grad):
    check_against_eager(sdpa_plain, [_Q, _K, _V], grad=grad)


def test_sdpa_causal():
    check_against_eager(sdpa_causal, [_Q, _K, _V])


@pytest.mark.parametrize("mask", [_FMASK, _BMASK], ids=["float_mask", "bool_mask"])
def test_sdpa_mask(mask):
    check_against_eager(sdpa_float_mask, [_Q, _K, _V, mask])


def test_sdpa_optional_mask_alternating():
    check_against_eager(sdpa_optional_mask, [_Q, _K, _V, _FMASK],
                        args_for_call=lambda i: [_Q, _K, _V, _FMASK if odd(i) else None])


def test_sdpa_bf16_inputs_in_eager_fp16_region():
    q, k, v = (t.to(torch.bfloat16) for t in (_Q, _K, _V))
    check_against_eager(sdpa_plain, [q, k, v], outer=cpu_autocast(torch.float16))
