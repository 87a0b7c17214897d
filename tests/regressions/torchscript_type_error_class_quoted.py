# jitamp_fuzz program: seed 7, index 6384
# Reproduce: python tools/jitamp_fuzz --seed 7 --index 6384
# (TorchScript's) c10's TypeError, which TorchScript re-raises as RuntimeError,
# with an apostrophe in its message (the oracle's reprs escape it differently
# on the two sides): known:torchscript-error-class.
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


def prog(x0: Tensor, x1: Tensor) -> Tuple[Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    v2 = torch.addbmm(x1, x1.unsqueeze(0), x1.unsqueeze(0)); sink.append(v2)
    v3 = x0
    torch.cat([v2[:2], v3[:2]], 0, out=v2)
    return (x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = False
OUTER = None
SAVE = False
RUNTIME_JITAMP = True
ALTERNATE = False


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(877347)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float64)
    x1 = torch.randint(-3, 4, (4, 4), generator=g)
    return [x0, x1]


def build():
    torch.manual_seed(877347)
    return prog


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
