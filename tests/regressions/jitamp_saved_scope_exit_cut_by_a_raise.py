# jitamp_fuzz program: seed 112903, index 40640 (torch 2.13): the frozen model, saved and loaded, lost a scope's exits after a raise (compiling the saved code drops what follows it); its float32 scope's guard, unused, was dropped at once and the scope ran in the caller's bfloat16 region (repairs/restore_exits_cut_by_raises.h)
# Reproduce: python tools/jitamp_fuzz --seed 112903 --index 40640
from typing import Dict, List, Optional, Tuple

import torch
import jitamp  # noqa: F401
import torch.nn.functional as F
from torch import Tensor


@torch.autocast('cpu', dtype=torch.bfloat16)
def h1(a: Tensor, b: Tensor, sink: List[Tensor]) -> Tensor:
    with torch.autocast('cpu', dtype=torch.float32, enabled=True, cache_enabled=True) as ac2:
        v3 = a
        v4 = b + b[:, :1]; sink.append(v4)
        d5: Dict[str, Tensor] = {"p": v4, "q": v3}
        v6 = torch.gru_cell(a, d5["q"], d5["p"].repeat(3, 1), d5["q"].repeat(3, 1)); sink.append(v6)
        if bool(a.sum() > 4.0):
            raise AssertionError('fuzz: a too large')
    return v6


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, x0: Tensor, flag: bool, n: int) -> Tuple[Tensor, Tensor, Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        v20 = x0
        if not flag:
            return (self.w, v20, v20, sink)
        v24 = x0
        v26 = h1(self.w, v24, sink); sink.append(v26)
        return (x0, x0, x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = False
OUTER = ('cpu', 'bfloat16', True)
SAVE = True
RUNTIME_JITAMP = False
ALTERNATE = False
EXECUTOR = 'simple'
ADD_AUTOCAST = 'bfloat16'
THREADS = None


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(644941)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float16)
    flag = flag
    n = 3 if flag else 1
    return [x0, flag, n]


def build():
    torch.manual_seed(644941)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
