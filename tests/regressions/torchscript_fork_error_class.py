# jitamp_fuzz program: seed 11, index 2009
# Reproduce: python tools/jitamp_fuzz --seed 11 --index 2009
# Fuzz finding 4 (TorchScript's): eager raises NotImplementedError; an op's error
# in a forked task comes back from torch.jit.wait as a RuntimeError, plain
# TorchScript too: known:fork-error-class.
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


def h1(a: Tensor, b: Tensor, sink: List[Tensor]) -> Tensor:
    with torch.autocast('cpu', dtype=torch.float32, cache_enabled=True):
        a = torch.cdist(b, b); sink.append(a)
    v12 = a
    return v12


def prog(x0: Tensor, x1: Tensor, dt: torch.dtype) -> Tuple[Tensor, Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    v41 = x0
    with torch.autocast('cpu', dtype=torch.bfloat16):
        v50 = F.linear(x0, x0); sink.append(v50)
        fut55 = torch.jit.fork(h1, v41, v50, sink); v54 = torch.jit.wait(fut55); sink.append(v54)
    return (x0, x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = False
OUTER = None
SAVE = False
RUNTIME_JITAMP = True
ALTERNATE = False


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(53796)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    x1 = torch.randn(4, 4, generator=g).to(torch.float32)
    dt = torch.bfloat16
    return [x0, x1, dt]


def build():
    torch.manual_seed(53796)
    return prog


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
