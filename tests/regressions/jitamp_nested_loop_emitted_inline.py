# jitamp_fuzz program: seed 2026, index 4352
# Reproduce: python tools/jitamp_fuzz --seed 2026 --index 4352
# Fuzz finding 6, nested loops: see jitamp_loop_emitted_inline_with_rebinding.py.
# Plain TorchScript fails on this program's unoptimized plan too.
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


def prog(x0: Tensor, x1: Tensor, x2: Tensor, flag: bool) -> Tuple[Tensor, Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    v2 = x0
    v3 = x0
    v4 = x0
    v6 = x0
    for i15 in range(2):
        v6 = torch.prod(v4, 1, keepdim=True) + v2; sink.append(v6)
        for i14 in range(2):
            v11 = torch.trace(v6) + x1; sink.append(v11)
            v3 = x0
    v19 = x0
    return (v6, v19, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = False
OUTER = None
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = False


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(499487)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    x1 = torch.randn(4, 4, generator=g).to(torch.float32)
    x2 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    return [x0, x1, x2, flag]


def build():
    torch.manual_seed(499487)
    return prog


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
