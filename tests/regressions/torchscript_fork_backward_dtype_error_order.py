# jitamp_fuzz program: seed 112602, index 50 (torch 2.13): a fork makes another backward error (an in-place check) come before eager's (huber loss backward's dtype check); direct calls give eager's
# Reproduce: python tools/jitamp_fuzz --seed 112602 --index 50
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


def h1(a: Tensor, b: Tensor, sink: List[Tensor]) -> Tensor:
    v2 = torch.fft.rfft(a).abs().sum(1, keepdim=True) + a; sink.append(v2)
    b = F.huber_loss(b, a, reduction='none'); sink.append(b)
    return b


def prog(x0: Tensor, x1: Tensor, flag: bool, dt: torch.dtype) -> Tuple[Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    v3 = torch.baddbmm(x0.unsqueeze(0), x1.unsqueeze(0), x0.unsqueeze(0)).squeeze(0); sink.append(v3)
    v4 = h1(v3, x0, sink); sink.append(v4)
    with torch.autocast('cpu', dtype=dt, enabled=flag, cache_enabled=flag):
        v3.copy_(v3)
        v5 = F.linear(v4, x1); sink.append(v5)
    fut8 = torch.jit.fork(h1, v3, v5, sink); v7 = torch.jit.wait(fut8); sink.append(v7)
    return (x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = True
OUTER = None
SAVE = False
RUNTIME_JITAMP = True
ALTERNATE = False
EXECUTOR = 'simple'


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(322889)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    x1 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    dt = torch.float16
    return [x0, x1, flag, dt]


def build():
    torch.manual_seed(322889)
    return prog


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
