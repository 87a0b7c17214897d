# jitamp_fuzz program: seed 112605, index 19372 (torch 2.13, an older generator), shrunk
# Fuzz finding 26 (fixed). Under no_grad, a region mixing bfloat16 and
# float16 scopes: jitamp's casts of leaves go through eager's cache, as
# eager's do. A float32 scope (eager warns and turns it off, but sets its
# dtype) inside the float16 one made jitamp look its marker up in eager's
# cache under float32, where eager never looks: it took the cache for
# cleared, forgot the region was mixed, and cast x0 afresh to bfloat16
# later where eager's cache hands addbmm the float16 cast and eager raises
# "self and mat2 must have the same dtype, but got Half and BFloat16".
# (tests/scenarios/test_cast_cache.py,
# test_a_scope_that_casts_nothing_keeps_a_mixed_regions_casts)
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


def h1(a: Tensor, b: Tensor, sink: List[Tensor]) -> Tensor:
    with torch.autocast('cpu', dtype=torch.float16):
        for i3 in range(2):
            assert bool(a.abs().max() < 8.0), 'fuzz: a out of range'
    return b


def h6(a: Tensor, b: Tensor, sink: List[Tensor]) -> Tensor:
    if True:
        v19 = torch.addbmm(a, a.unsqueeze(0), b.unsqueeze(0)); sink.append(v19)
    with torch.cpu.amp.autocast(dtype=torch.float32):
        v20 = torch.softmax(a, -1); sink.append(v20)
    return a


def prog(x0: Tensor, x1: Tensor, flag: bool, n: int) -> Tuple[Tensor, Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    ac23 = torch.amp.autocast('cpu', dtype=torch.bfloat16)
    with ac23:
        if n > 2:
            ac24 = torch.cpu.amp.autocast(dtype=torch.float16 if flag else torch.bfloat16, cache_enabled=flag)
            with ac24:
                v26 = h6(x1, x1, sink); sink.append(v26)
                v27 = h6(x0, v26, sink); sink.append(v27)
            v29 = h6(x0, v27, sink); sink.append(v29)
    fut31 = torch.jit.fork(h6, x1, x1, sink); v30 = torch.jit.wait(fut31); sink.append(v30)
    return (v30, x1, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = True
OUTER = 'no_grad'
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = True
EXECUTOR = 'simple'


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(860545)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    x1 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    n = 3 if flag else 1
    return [x0, x1, flag, n]


def build():
    torch.manual_seed(860545)
    return prog


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
