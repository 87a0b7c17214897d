# jitamp_fuzz program: seed 112807, index 41946 (torch 2.13), shrunk
# Reproduce: python tools/jitamp_fuzz --seed 112807 --index 41946
# A scripted helper called twice: first in a float16 scope with the weight,
# whose stack of the weight's rows and a bfloat16 input's raises in eager
# ("Unexpected floating ScalarType in at::autocast::prioritize"). Frozen, the
# helper's `if` on the weight's sum is a constant in that call, the stack's
# result feeds only the branch not taken, and dead code elimination drops it:
# the frozen model raises the second call's error further on
# (frozen-mismatch:error). TorchScript's own (freezing folds the condition;
# plain TorchScript drops dead ops, test_dead_code_error_is_torchscripts):
# the frozen graph has fewer of the line's ops than the program inlined,
# "known:dead-code".
from typing import Dict, List, Optional, Tuple

import torch
import jitamp  # noqa: F401
import torch.nn.functional as F
from torch import Tensor


@torch.jit.script
def h1(a: Tensor, b: Tensor) -> Tensor:
    b = torch.stack([b[0], a[1], a[2], b[3]])
    if bool(a.sum() > 0):
        v2 = a
        a = torch.linalg.vecdot(b, v2).unsqueeze(1) + v2
    else:
        pass
    return a


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, x0: Tensor, x1: Tensor, flag: bool, dt: torch.dtype, n: int, dev: str) -> Tuple[Tensor, Tensor, Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        ac9 = torch.autocast('cpu', dtype=torch.float16, cache_enabled=flag)
        with ac9:
            v10 = x0
            v13 = h1(self.w, x0); sink.append(v13)
        v18 = h1(x1, v10); sink.append(v18)
        return (x0, x0, x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = False
OUTER = None
SAVE = False
RUNTIME_JITAMP = True
ALTERNATE = False
EXECUTOR = 'profiling'
ADD_AUTOCAST = 'bfloat16'
THREADS = None


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(808465)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.bfloat16)
    x1 = torch.randn(4, 4, generator=g).to(torch.float16)
    flag = flag
    dt = torch.float16
    n = 3 if flag else 1
    dev = 'cuda'
    return [x0, x1, flag, dt, n, dev]


def build():
    torch.manual_seed(808465)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
