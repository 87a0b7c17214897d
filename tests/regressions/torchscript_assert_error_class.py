# jitamp_fuzz program: seed 112602, index 131 (torch 2.13): an `assert` that fails
# Reproduce: python tools/jitamp_fuzz --seed 112602 --index 131
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


def prog(x0: Tensor, x1: Tensor, flag: bool, n: int, bias: Optional[Tensor]) -> Tuple[Tensor, Tensor, Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    v2 = F.margin_ranking_loss(x0, x1, x1, reduction='none'); sink.append(v2)
    if flag:
        return (x1, x0, x1, sink)
    with torch.autocast('cpu', dtype=torch.bfloat16):
        v3 = F.group_norm(v2.unsqueeze(0), 2).squeeze(0); sink.append(v3)
    assert bool(v2.abs().max() < 8.0), 'fuzz: v2 out of range'
    return (v3, x0, x1, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = False
OUTER = None
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = True
EXECUTOR = 'profiling'


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(539863)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    x1 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    n = 3 if flag else 1
    bias = torch.randn(4, generator=g) if flag else None
    return [x0, x1, flag, n, bias]


def build():
    torch.manual_seed(539863)
    return prog


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
