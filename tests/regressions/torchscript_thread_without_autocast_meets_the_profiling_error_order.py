# jitamp_fuzz program: seed 271127, index 11376 (torch 2.13): two threads call the model, one inside a bfloat16 region (OUTER), the other without autocast; the second's call 2 (the profiling executor's optimized plan) raises linalg.eig's error where eager raises addmm's first: plain TorchScript's profiling plan too, which the program called alone in that thread's region shows: known:profiling-plain-torchscript (runner._alone_in_its_region)
# Reproduce: python tools/jitamp_fuzz --seed 271127 --index 11376
from typing import Dict, List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


@torch.jit.ignore
def ign1(a: Tensor, b: Tensor) -> Tensor:
    r = F.nll_loss(a, torch.tensor([0, 1, 2, 3])) + b
    return r


class Sub2(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, a: Tensor, sink: List[Tensor]) -> Tensor:
        return a


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))
        self.sub = Sub2()

    def forward(self, x0: Tensor, n: int) -> Tuple[Tensor, Tensor, Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        ob: Optional[Tensor] = None
        if True:
            ob = x0[1]
        v3 = self.w.t(); sink.append(v3)
        if n > 2:
            return (v3, v3, self.w, sink)
        v4 = torch.addmm(x0[0], x0, v3); sink.append(v4)
        v5 = x0.to(torch.bfloat16); sink.append(v5)
        v6 = torch.linalg.eig(v5.nan_to_num(0.0, 0.0, 0.0))[0].real.unsqueeze(0) * v5; sink.append(v6)
        return (v5, v6, v4, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = False
OUTER = ('cpu', 'bfloat16', True)
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = True
EXECUTOR = 'profiling'
ADD_AUTOCAST = None
THREADS = (None,)


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(707976)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g, dtype=torch.complex64)
    n = 3 if flag else 1
    return [x0, n]


def build():
    torch.manual_seed(707976)
    return Prog()
