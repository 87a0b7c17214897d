# jitamp_fuzz program: seed 1327, index 5358 (torch 2.13)
# Reproduce: python tools/jitamp_fuzz --seed 1327 --index 5358
# No gradients. The @torch.jit.script callee h1 computes fft of a bfloat16
# value (which raises "Unsupported dtype BFloat16") into a value that only a
# dead loop-carried variable reads: its own plan, which eager calls, drops
# it, and eager raises later (sdpa). Inlined in prog's plan, the loop keeps
# it and the program raises there: known:dead-code.
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


@torch.jit.script
def h1(a: Tensor, b: Tensor) -> Tensor:
    v5 = F.cross_entropy(a, torch.softmax(b, 1)) + b
    for i10 in range(2):
        v6 = torch.fft.fft(v5).abs()
        if bool(b.sum() > 0):
            a = v6.float()
    return v5


def prog(x0: Tensor, x1: Tensor, x2: Tensor, flag: bool) -> Tuple[Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    v19 = h1(x2, x2); sink.append(v19)
    with torch.amp.autocast('cpu', dtype=torch.bfloat16, enabled=bool(v19.sum() > 0), cache_enabled=False):
        v27 = x0
        v29 = x0 @ v27; sink.append(v29)
    v33 = x0
    v34 = h1(v33, v29); sink.append(v34)
    v36 = F.scaled_dot_product_attention(v34.unsqueeze(0), v29.unsqueeze(0), v19.unsqueeze(0)).squeeze(0); sink.append(v36)
    return (x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = False
OUTER = None
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = False
EXECUTOR = 'profiling'


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(82769)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    x1 = torch.randn(4, 4, generator=g).to(torch.float32)
    x2 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    return [x0, x1, x2, flag]


def build():
    torch.manual_seed(82769)
    return prog


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
