# jitamp_fuzz program: seed 7, index 147
# Reproduce: python tools/jitamp_fuzz --seed 7 --index 147
# Fuzz finding 8 (TorchScript's): backward meets two failing nodes. Eager fails at
# the NotImplemented node of `softmax(..., out=v7)`; jitamp, as plain
# TorchScript, at gelu's check of v7's version, which runs first because the
# forked task's nodes, numbered on its thread, come after it:
# known:fork-grad-order.
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


def h3(a: Tensor, b: Tensor, sink: List[Tensor]) -> Tensor:
    a = torch.linalg.vector_norm(a, dim=[1], keepdim=True) + b; sink.append(a)
    return a


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, x0: Tensor, x1: Tensor) -> Tuple[Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        v5 = x0
        v6 = x0
        v7 = torch.cdist(v6, v6); sink.append(v7)
        v8 = F.gelu(v7); sink.append(v8)
        torch.softmax(v6, 1, out=v7)
        v14 = torch.mv(x1, v5[0]).unsqueeze(1) + v7; sink.append(v14)
        fut16 = torch.jit.fork(h3, v14, x0, sink); v15 = torch.jit.wait(fut16); sink.append(v15)
        return (x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = True
OUTER = None
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = False


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(472818)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    x1 = torch.randn(4, 4, generator=g).to(torch.float32)
    return [x0, x1]


def build():
    torch.manual_seed(472818)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
