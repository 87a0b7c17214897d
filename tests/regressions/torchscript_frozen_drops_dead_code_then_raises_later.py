# jitamp_fuzz program: seed 1140, index 4137 (torch 2.13)
# Reproduce: python tools/jitamp_fuzz --seed 1140 --index 4137
# Fuzz finding 17 (TorchScript's).
# Eager raises in h8's layer_norm (mixed dtypes), whose result only a dead
# if reads; the frozen model has dropped it, as TorchScript's freeze does
# without jitamp, and raises further on, at an addmm eager never reached:
# "known:dead-code" with another error, not only where the frozen model returns.
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


@torch.jit.script
def h8(a: Tensor, b: Tensor) -> Tensor:
    v9 = b.to(torch.bfloat16)
    a = F.layer_norm(v9, [4], v9[0], a[1])
    if bool(a.sum() > 0):
        v12 = F.layer_norm(b, [4], a[0], v9[1])
    return v9


class Sub21(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, a: Tensor, sink: List[Tensor]) -> Tensor:
        return self.w


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))
        self.sub = Sub21()

    def forward(self, x0: Tensor, x1: Tensor, x2: Tensor, flag: bool) -> Tuple[Tensor, Tensor, Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        v24 = h8(x2, self.w); sink.append(v24)
        ac25 = torch.autocast(device_type='cpu', dtype=torch.bfloat16) if flag else torch.autocast('cuda', enabled=bool(v24.sum() > 0))
        v28 = torch.addmm(x1, v24, x2); sink.append(v28)
        return (x0, x0, x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = False
OUTER = None
SAVE = False
RUNTIME_JITAMP = True
ALTERNATE = False
EXECUTOR = 'profiling'


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(258348)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    x1 = torch.randn(4, 4, generator=g).to(torch.float32)
    x2 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    return [x0, x1, x2, flag]


def build():
    torch.manual_seed(258348)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
