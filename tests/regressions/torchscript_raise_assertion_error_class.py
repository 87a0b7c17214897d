# jitamp_fuzz program: seed 112602, index 95 (torch 2.13): `raise AssertionError(...)`
# Reproduce: python tools/jitamp_fuzz --seed 112602 --index 95
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


def prog(x0: Tensor, dt: torch.dtype, bias: Optional[Tensor]) -> Tuple[Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    raise AssertionError('fuzz: v12 too large')
    return (x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = False
OUTER = None
SAVE = False
RUNTIME_JITAMP = True
ALTERNATE = False
EXECUTOR = 'simple'


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(494548)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    dt = torch.bfloat16
    bias = torch.randn(4, generator=g) if flag else None
    return [x0, dt, bias]


def build():
    torch.manual_seed(494548)
    return prog


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
