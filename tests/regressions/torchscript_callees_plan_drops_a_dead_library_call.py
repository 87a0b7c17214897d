# jitamp_fuzz program: seed 112901, index 5281 (torch 2.13), shrunk
# Reproduce: python tools/jitamp_fuzz --seed 112901 --index 5281
# A `@torch.jit.script` helper's dead F.multi_margin_loss of a float16
# value (no float16 kernel): eager calls the helper, whose own plan has
# dropped the dead call, and returns; the program, the helper inlined in its
# profiling plan, runs it and raises (mismatch:error), as eager's Python
# would. TorchScript's dead code elimination in the helper's plan
# (test_fuzz_regressions.py, test_dead_code_error_is_torchscripts): the
# runner finds the raising call's line, the innermost of the program's file,
# gone from the plan eager ran: "known:dead-code".
from typing import Dict, List, Optional, Tuple

import torch
import jitamp  # noqa: F401
import torch.nn.functional as F
from torch import Tensor


@torch.jit.script
def h1(a: Tensor, b: Tensor) -> Tensor:
    v2 = a
    with torch.autocast('cpu', dtype=torch.float16, enabled=bool(a.sum() > 0)):
        v6 = F.multi_margin_loss(a, torch.tensor([0, 1, 2, 3]), reduction='none').unsqueeze(1) + v2
    v7 = F.smooth_l1_loss(v6, v6, reduction='none')
    v14 = a
    return v14


def h15(a: Tensor, b: Tensor, sink: List[Tensor]) -> Tensor:
    v17 = h1(a, b); sink.append(v17)
    v22 = h1(b, a); sink.append(v22)
    return a


class Sub26(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, a: Tensor, sink: List[Tensor]) -> Tensor:
        v29 = a
        return v29


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))
        self.sub = Sub26()

    def forward(self, x0: Tensor, x1: Tensor, flag: bool, dt: torch.dtype, n: int) -> Tuple[Tensor, Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        tu31 = (x0, x1)
        v32 = F.linear(tu31[1], x0, None); sink.append(v32)
        v36 = h15(tu31[1], v32, sink); sink.append(v36)
        return (x0, x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = False
OUTER = ('cpu', 'float16', True)
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = False
EXECUTOR = 'profiling'
ADD_AUTOCAST = None
THREADS = None


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(3210)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    x1 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    dt = torch.float16
    n = 3 if flag else 1
    return [x0, x1, flag, dt, n]


def build():
    torch.manual_seed(3210)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
