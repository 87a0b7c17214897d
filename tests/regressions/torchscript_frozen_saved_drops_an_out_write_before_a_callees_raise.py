# jitamp_fuzz program: seed 125, index 1889
# Reproduce: python tools/jitamp_fuzz --seed 125 --index 1889
# Profiling executor, frozen, saved and loaded, no gradients. Eager raises
# the out= softmax's dtype error (a bfloat16 input, a float32 `out`: the
# quantile's float32 plus a bfloat16 input); the frozen model raises it
# too, but the frozen model saved and loaded raises the submodule's
# RuntimeError further on. Once loading inlines the submodule, whose
# forward only raises, the model's graph ends in that raise, and nothing
# reads what the softmax writes: the dead code elimination every executor
# runs, which reads aliases, drops the write before the first call, as
# it does without jitamp (test_frozen_saved_drops_a_dead_out_write_is_torchscripts).
# The first call differs, so the profiling executor has made no plan to
# read: the runner eliminates dead code in the model's graph itself
# (runner._frozen_graphs): known:dead-code.
from typing import Dict, List, Optional, Tuple

import torch
import jitamp  # noqa: F401
import torch.nn.functional as F
from torch import Tensor


class Sub1(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, a: Tensor, sink: List[Tensor]) -> Tensor:
        raise RuntimeError('fuzz: self.w too large')
        return v2


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))
        self.sub = Sub1()

    def forward(self, x0: Tensor, x1: Tensor, x2: Tensor, dt: torch.dtype, bias: Optional[Tensor]) -> Tuple[Tensor, Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        with torch.autocast(device_type='cpu', dtype=torch.bfloat16):
            v11 = x0
            v12 = torch.quantile(x0, 0.5, dim=1, keepdim=True) + x1; sink.append(v12)
        v17 = x0
        torch.softmax(v11, 1, out=v12)
        v19 = self.sub(v17, sink); sink.append(v19)
        return (x0, x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = False
OUTER = None
SAVE = True
RUNTIME_JITAMP = False
ALTERNATE = False
EXECUTOR = 'profiling'
ADD_AUTOCAST = None
THREADS = (('cpu', 'bfloat16', True),)


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(378131)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.bfloat16)
    x1 = torch.randn(4, 4, generator=g).to(torch.bfloat16)
    x2 = torch.randn(4, 4, generator=g).to(torch.bfloat16)
    dt = torch.bfloat16
    bias = torch.randn(4, generator=g) if flag else None
    return [x0, x1, x2, dt, bias]


def build():
    torch.manual_seed(378131)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
