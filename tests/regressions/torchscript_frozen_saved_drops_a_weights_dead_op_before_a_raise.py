# jitamp_fuzz program: seed 271128, index 32224
# Reproduce: python tools/jitamp_fuzz --seed 271128 --index 32224
# Simple executor, frozen, saved and loaded, no gradients. Eager raises
# baddbmm's dtype error (a float32 weight and the float16 result of the
# scope's linear); the frozen model raises it too, but the frozen model
# saved and loaded raises the submodule's RuntimeError further on. The
# baddbmm reads weights only, and its result only the list `sink`, which
# nothing reads once the submodule (inlined) raises unconditionally:
# loading compiles the frozen model's code again, and its dead code
# elimination drops the appends, then the baddbmm, as it would without
# jitamp. Not constant folding: in jitamp's graph of the model that was
# saved the baddbmm reads smart casts, whose region token is never a
# constant (runner._raises_in_dead_code): known:dead-code.
from typing import Dict, List, Optional, Tuple

import torch
import jitamp  # noqa: F401
import torch.nn.functional as F
from torch import Tensor


class Sub8(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, a: Tensor, sink: List[Tensor]) -> Tensor:
        raise RuntimeError('fuzz: self.w too large')
        return self.w


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))
        self.sub = Sub8()

    def forward(self, x0: Tensor, flag: bool, n: int, dev: str, bias: Optional[Tensor]) -> Tuple[Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        ac10 = torch.amp.autocast('cpu', dtype=torch.float16)
        with ac10:
            v11 = self.lin(self.w); sink.append(v11)
        v11 = torch.baddbmm(self.w[:1].unsqueeze(0), self.w.unsqueeze(0), v11.unsqueeze(0)).squeeze(0); sink.append(v11)
        v18 = self.sub(x0, sink); sink.append(v18)
        return (x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = False
OUTER = None
SAVE = True
RUNTIME_JITAMP = False
ALTERNATE = False
EXECUTOR = 'simple'
ADD_AUTOCAST = None
THREADS = None


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(643470)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float16)
    flag = flag
    n = 3 if flag else 1
    dev = 'cuda'
    bias = torch.randn(4, generator=g) if flag else None
    return [x0, flag, n, dev, bias]


def build():
    torch.manual_seed(643470)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
