# jitamp_fuzz program: seed 112605, index 19372 (torch 2.13): under no_grad, a forked task's first (uncached) cast of a leaf must be known to the caller's thread, as eager's process-wide cache knows it (fuzz finding 23)
# Reproduce: python tools/jitamp_fuzz --seed 112605 --index 19372
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


def h6(a: Tensor, b: Tensor, sink: List[Tensor]) -> Tensor:
    v19 = torch.addbmm(a, a.unsqueeze(0), b.unsqueeze(0)); sink.append(v19)
    return a


def prog(x0: Tensor, x1: Tensor, flag: bool, n: int) -> Tuple[Tensor, Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    ac23 = torch.amp.autocast('cpu', dtype=torch.bfloat16)
    with ac23:
        ac24 = torch.cpu.amp.autocast(dtype=torch.float16 if flag else torch.bfloat16, cache_enabled=flag)
        with ac24:
            v26 = x0
            fut28 = torch.jit.fork(h6, x0, v26, sink); v27 = torch.jit.wait(fut28); sink.append(v27)
        v29 = h6(x0, v27, sink); sink.append(v29)
    return (x0, x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = True
OUTER = 'no_grad'
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = False
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
