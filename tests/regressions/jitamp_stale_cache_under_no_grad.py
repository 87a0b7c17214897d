# jitamp_fuzz program: seed 1327, index 10908 (torch 2.13)
# Reproduce: python tools/jitamp_fuzz --seed 1327 --index 10908
# Fuzz finding 20.
# Under torch.no_grad(): h1's float16 scope, inside prog's bfloat16 one, casts
# the leaf x2; eager's cache keeps that cast, and hands it to F.linear under
# the bfloat16 scope, which raises ("expected m1 and m2 to have the same
# dtype"). jitamp copied the first cast without the cache (no grad mode), so
# linear got a fresh bfloat16 cast and returned. Fixed: a weight met again
# under a scope of another dtype gets eager's first cast from eager's cache
# (csrc/jit_autocast/ops/cast_ops.cpp, keepInEagerCache).
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


def h1(a: Tensor, b: Tensor, sink: List[Tensor]) -> Tensor:
    with torch.autocast('cpu', dtype=torch.float16, cache_enabled=True):
        v2 = a
        v3 = torch.matmul(b, v2); sink.append(v3)
    return a


def prog(x0: Tensor, x1: Tensor, x2: Tensor, flag: bool, dt: torch.dtype, bias: Optional[Tensor]) -> Tuple[Tensor, Tensor, Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    with torch.autocast('cpu', dtype=torch.bfloat16):
        v10 = h1(x2, x1, sink); sink.append(v10)
        v11 = x0
        v12 = F.linear(v11, v10); sink.append(v12)
    return (x0, x0, x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = True
OUTER = 'no_grad'
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = False
EXECUTOR = 'simple'


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(653615)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    x1 = torch.randn(4, 4, generator=g).to(torch.float32)
    x2 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    dt = torch.float16
    bias = torch.randn(4, generator=g) if flag else None
    return [x0, x1, x2, flag, dt, bias]


def build():
    torch.manual_seed(653615)
    return prog


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
