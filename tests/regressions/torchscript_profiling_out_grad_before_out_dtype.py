# jitamp_fuzz program: seed 2604, index 1505 (torch 2.13; 2.4.1, 2.11 and 2.15 too)
# Reproduce: python tools/jitamp_fuzz --seed 2604 --index 1505
# Profiling executor, gradients. h1's `softmax(b, 1, out=v3)` writes a
# float32 softmax into v3, bfloat16 (bmm under the region): eager's op
# raises its out dtype check. After calls that profile (call 2 takes the
# other branch), the optimized plan computes v3 in a differentiable
# subgraph, and TorchScript raises autograd's out= error at the same op
# first ("aten::softmax(): functions with out=... arguments don't support
# automatic differentiation"). Plain TorchScript does the same without
# autocast (tests/test_fuzz_regressions.py): known:profiling-out-grad.
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


def h1(a: Tensor, b: Tensor, sink: List[Tensor]) -> Tensor:
    v3 = torch.bmm(a.unsqueeze(0), b.unsqueeze(0)).squeeze(0); sink.append(v3)
    torch.softmax(b, 1, out=v3)
    v13 = a
    return v13


def prog(x0: Tensor, x1: Tensor, flag: bool) -> Tuple[Tensor, Tensor, Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    v38 = x0
    if not flag:
        return (v38, x1, x0, sink)
    with torch.amp.autocast('cpu', dtype=torch.bfloat16):
        v39 = h1(x1, v38, sink); sink.append(v39)
    return (x0, x0, x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = True
OUTER = None
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = True
EXECUTOR = 'profiling'


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(290814)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    x1 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    return [x0, x1, flag]


def build():
    torch.manual_seed(290814)
    return prog


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
