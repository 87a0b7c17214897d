# jitamp_fuzz program: seed 291115, index 998 (torch 2.13), shrunk
# Reproduce: python tools/jitamp_fuzz --seed 291115 --index 998
# (TorchScript's front end) Eager raises at h1's `if` condition (`gt` of a
# complex sum); the `if` does nothing, so scripting h1 leaves a graph that
# returns `a` and nothing else, and the scripted program returns where
# eager raises (in the program found, it raised later, at
# binary_cross_entropy of complex values). Nothing of h1 is left in the
# graph forward runs once h1 is inlined, so only h1's own compiled graph
# shows the line was dropped: known:dead-code (runner._compiled_without).
from typing import Dict, List, Optional, Tuple

import torch
import jitamp  # noqa: F401
import torch.nn.functional as F
from torch import Tensor


def h1(a: Tensor, b: Tensor, sink: List[Tensor]) -> Tensor:
    if bool(b.sum() > 0):
        pass
    return a


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, x0: Tensor, x1: Tensor, flag: bool, dt: torch.dtype, dev: str, bias: Optional[Tensor]) -> Tuple[Tensor, Tensor, Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        v4 = h1(self.w, x1, sink); sink.append(v4)
        return (x0, x0, x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = False
OUTER = None
SAVE = False
RUNTIME_JITAMP = True
ALTERNATE = False
EXECUTOR = 'simple'
ADD_AUTOCAST = None
THREADS = None


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(164241)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g, dtype=torch.complex64)
    x1 = torch.randn(4, 4, generator=g, dtype=torch.complex64)
    flag = flag
    dt = torch.bfloat16
    dev = 'cuda'
    bias = torch.randn(4, generator=g) if flag else None
    return [x0, x1, flag, dt, dev, bias]


def build():
    torch.manual_seed(164241)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
