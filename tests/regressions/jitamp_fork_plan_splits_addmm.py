# jitamp_fuzz program: seed 1, index 169
# Reproduce: python tools/jitamp_fuzz --seed 1 --index 169
# Fuzz finding 1: a forked task's subgraph ran under TorchScript's default
# executor, whose DecomposeOps split a bfloat16 addmm into mm + add (rounding
# twice). Fixed: the fork's plan is made without graph optimizations, as the
# simple executor's are (csrc/jit_autocast/ops/task_ops.cpp).
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


@torch.autocast('cpu', dtype=torch.bfloat16)
def h1(a: Tensor, b: Tensor, sink: List[Tensor]) -> Tensor:
    v3 = a
    v4 = a
    v5 = torch.addmm(v3, a, v4); sink.append(v5)
    return b


def prog(x0: Tensor, x1: Tensor, flag: bool, dt: torch.dtype, n: int) -> Tuple[Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    v7 = x0
    fut12 = torch.jit.fork(h1, v7, v7, sink); v11 = torch.jit.wait(fut12); sink.append(v11)
    return (x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = False
OUTER = None
SAVE = False
RUNTIME_JITAMP = True
ALTERNATE = False


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(603820)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    x1 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    dt = torch.bfloat16
    n = 3 if flag else 1
    return [x0, x1, flag, dt, n]


def build():
    torch.manual_seed(603820)
    return prog


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
