# jitamp_fuzz program: seed 271127, index 34015
# Reproduce: python tools/jitamp_fuzz --seed 271127 --index 34015
# Simple executor, frozen, no gradients, under a bfloat16 region. The
# @torch.jit.script helper h1, called from eager's forward, raises cdist's
# dtype error (float32 and bfloat16: its float32 scope turns autocast off)
# in the first iteration of a loop of two, at its second call. The cdist's
# result feeds only the second iteration's condition, whose branch computes
# nothing the program reads: once the frozen model's plan unrolls the loop,
# dead code elimination drops that branch, then the cdist. Its plan (the
# graph that ran, runner._frozen_graphs) has fewer cdists at that line than
# the program, callees inlined, has: known:dead-code. (The shrinker's
# smaller version, with h1 also forked, keeps the counts equal, since the
# forked copy's plan keeps its cdist: the counts are per line, not per call.)
from typing import Dict, List, Optional, Tuple

import torch
import jitamp  # noqa: F401
import torch.nn.functional as F
from torch import Tensor


@torch.jit.script
def h1(a: Tensor, b: Tensor) -> Tensor:
    v2 = F.conv1d(b.unsqueeze(0), b.unsqueeze(2)).squeeze(0)
    with torch.cpu.amp.autocast(dtype=torch.float32, enabled=True):
        for i9 in range(2):
            if bool(b.sum() > 0):
                b = torch.cdist(a[:2], v2).repeat(2, 1)
    return v2


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, x0: Tensor, x1: Tensor, flag: bool, n: int) -> Tuple[Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        v14 = x0
        v15 = x0
        d18: Dict[str, Tensor] = {"p": x1, "q": v15}
        v22 = torch.cdist(x0, v14); sink.append(v22)
        v23 = h1(v22, d18["p"]); sink.append(v23)
        return (x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = False
OUTER = ('cpu', 'bfloat16', True)
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = False
EXECUTOR = 'simple'
ADD_AUTOCAST = None
THREADS = None


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(809282)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    x1 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    n = 3 if flag else 1
    return [x0, x1, flag, n]


def build():
    torch.manual_seed(809282)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
