# jitamp_fuzz program: seed 2110, index 847 (torch 2.11; 2.4.1, 2.13 and 2.15 too)
# Reproduce: python tools/jitamp_fuzz --seed 2110 --index 847
# Profiling executor, no gradients, under an outer float16 region. The
# @torch.jit.script callee h1 computes a conv loop whose result nothing
# reads; its disabled scope (a.sum() <= 0 at the second call) would make
# conv1d raise on mixed dtypes. Eager calls h1 forked, then directly: its
# first call profiles, the second runs the optimized plan, from which
# TorchScript's dead code elimination dropped the loop, and returns. The
# scripted program raises there in every call (its own profiling run).
# The program forks, so the runner's fork rule used to claim the error and
# skip the dead-code rule: mismatch:error. Now known:dead-code.
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


@torch.jit.script
def h1(a: Tensor, b: Tensor) -> Tensor:
    v2 = a
    v3 = a
    with torch.autocast('cpu', dtype=torch.float16, enabled=bool(v2.sum() > 0)):
        v4 = a
        for i7 in range(2):
            a = F.conv1d(v3.unsqueeze(0), b.unsqueeze(2), a[0]).squeeze(0)
    return v4


def prog(x0: Tensor, x1: Tensor, dt: torch.dtype) -> Tuple[Tensor, Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    v13 = x0 - x1 * 0.5; sink.append(v13)
    v12 = F.log_softmax(v13, 1); sink.append(v12)
    v14 = x0
    fut18 = torch.jit.fork(h1, v14, x1); v17 = torch.jit.wait(fut18); sink.append(v17)
    torch.cat([v12[:2], x0[:2]], 0, out=v13)
    v27 = x0 @ v13; sink.append(v27)
    v28 = h1(v27, x0); sink.append(v28)
    return (x0, x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = False
OUTER = ('cpu', 'float16', True)
SAVE = False
RUNTIME_JITAMP = True
ALTERNATE = False
EXECUTOR = 'profiling'


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(107426)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    x1 = torch.randn(4, 4, generator=g).to(torch.float32)
    dt = torch.float16
    return [x0, x1, dt]


def build():
    torch.manual_seed(107426)
    return prog


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
