# jitamp_fuzz program: seed 112805, index 3115 (torch 2.13), shrunk by hand
# Reproduce: python tools/jitamp_fuzz --seed 112805 --index 3115
# The standalone frozen model (jitamp.freeze(standalone=True): the static
# float16 scope's casts folded, its scope ops gone), saved and loaded for
# TorchScript's stock executor: the raise's condition reads only a weight,
# so loading folds it and the raise is unconditional; the conv2d before it,
# whose result only code after the raise reads (the returned sink list),
# is dead and dropped. Eager raises the conv2d's dtype error ("expected
# scalar type Half but found Double": a float16 weight, a float64 input);
# the stock model raises the ValueError (stock-mismatch:error). TorchScript's
# dead code elimination: "known:dead-code" (the line is gone from the loaded
# model's graph and reads an argument, so no constant folding took it).
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, x0: Tensor, flag: bool) -> Tuple[Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        v6 = F.gelu(self.w); sink.append(v6)
        with torch.autocast('cpu', dtype=torch.float16):
            v7 = F.conv2d(self.w.reshape(1, 1, 4, 4), x0[:3, :3].reshape(1, 1, 3, 3), None, 1, 1).reshape(4, 4); sink.append(v7)
            if bool(v6.sum() > -100.0):
                raise ValueError('fuzz: v6 too large')
        v7 = x0.to(v7.dtype); sink.append(v7)
        return (v6, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = True
OUTER = None
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = False
EXECUTOR = 'simple'
ADD_AUTOCAST = None
THREADS = None


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(681292)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float64)
    return [x0, flag]


def build():
    torch.manual_seed(681292)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
