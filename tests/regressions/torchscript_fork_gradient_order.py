# jitamp_fuzz program: seed 1, index 952
# Reproduce: python tools/jitamp_fuzz --seed 1 --index 952
# Fuzz finding 1 (gradients; TorchScript's): a forked task's autograd nodes are
# numbered on its thread, so backward sums the gradients that cross the task
# in another order than eager's inline fork. Plain TorchScript gives the same
# gradients as jitamp, bit for bit: known:fork-grad-order.
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


def h1(a: Tensor, b: Tensor, sink: List[Tensor]) -> Tensor:
    v2 = a.clamp(-1.0, 1.0); sink.append(v2)
    return a


def prog(x0: Tensor, x1: Tensor, flag: bool) -> Tuple[Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    v9 = torch.mm(x0, x0); sink.append(v9)
    for i13 in range(2):
        fut11 = torch.jit.fork(h1, x0, v9, sink); v10 = torch.jit.wait(fut11); sink.append(v10)
    return (v9, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = True
OUTER = None
SAVE = False
RUNTIME_JITAMP = True
ALTERNATE = False


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(571573)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.bfloat16)
    x1 = torch.randn(4, 4, generator=g).to(torch.bfloat16)
    flag = flag
    return [x0, x1, flag]


def build():
    torch.manual_seed(571573)
    return prog


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
