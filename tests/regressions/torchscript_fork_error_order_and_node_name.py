# jitamp_fuzz program: seed 2603, index 52 (torch 2.13)
# Reproduce: python tools/jitamp_fuzz --seed 2603 --index 52
# Backward meets in-place writes to values it saved: eager fails at the
# float16 `v8` that mul_ wrote ("output 0 of Mul"); with the fork, the
# task's autograd nodes are numbered on its thread and backward checks the
# float32 `v17` that addmm_ wrote first ("output 0 of Addmm"), as plain
# TorchScript's fork does. With each fork/wait a direct call, both fail at
# v8, and TorchScript names its node "Mul1" (known:autograd-node-name):
# the fork adds only the order (runner._known_finding).
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


def h2(a: Tensor, b: Tensor, sink: List[Tensor]) -> Tensor:
    v3 = a
    v6 = a
    v7 = a
    v8 = torch.addmm(v7, v3, a); sink.append(v8)
    v10 = torch.addcmul(v6, a, v8, value=0.5); sink.append(v10)
    v8.mul_(2.0)
    v15 = a
    return v15


def prog(x0: Tensor, x1: Tensor, flag: bool, dt: torch.dtype, dev: str) -> Tuple[Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    v17 = torch.exp(x0); sink.append(v17)
    v17.addmm_(v17, x1)
    v28 = x0
    v29 = x0
    with torch.autocast('cpu', dtype=torch.float16):
        fut32 = torch.jit.fork(h2, v28, v29, sink); v31 = torch.jit.wait(fut32); sink.append(v31)
    return (x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = True
OUTER = None
SAVE = False
RUNTIME_JITAMP = True
ALTERNATE = False
EXECUTOR = 'simple'


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(470705)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    x1 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    dt = torch.float16
    dev = 'cpu'
    return [x0, x1, flag, dt, dev]


def build():
    torch.manual_seed(470705)
    return prog


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
