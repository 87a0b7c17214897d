# jitamp_fuzz program: seed 112903, indices 36893 and 43125 (torch 2.13), shrunk by hand
# Reproduce: python tools/jitamp_fuzz --seed 112903 --index 36893
# (torch.jit.freeze's: a weight that may be written stays an attribute) A
# known deviation of frozen models. Freezing folds a parameter into a
# constant only where its alias analysis finds nothing may write it: here
# self.w sits in a list whose element the program writes, so the frozen
# model keeps it, a leaf that requires grad, which the cast cache serves as
# eager's; lin's weight it folds, which the cache never serves. A bfloat16
# scope caches both weights' casts; under float16, eager's lin gets its
# weight's bfloat16 cast and raises; the frozen model's lin casts afresh and
# runs, and its matmul gets w's cached bfloat16 cast and raises there (the
# scopes ask for the cache, so no flag of the caller's turns it off). Eager
# whose folded parameters (only) do not require grad raises as the frozen
# model: known:frozen-constant-weights (runner, _kept_by).
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, x0: Tensor, x1: Tensor) -> Tuple[Tensor, List[Tensor]]:
        sink: List[Tensor] = [self.w, x0 + 1.0]
        sink[1].add_(1.0)
        with torch.autocast('cpu', dtype=torch.bfloat16, cache_enabled=True):
            v2 = self.lin(self.w); sink.append(v2)
        with torch.autocast('cpu', dtype=torch.float16, cache_enabled=True):
            v3 = self.lin(x0); sink.append(v3)
            v4 = self.w @ x1; sink.append(v4)
        return (v4, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = True
OUTER = ('cpu', 'float16', False)
SAVE = False
RUNTIME_JITAMP = True
ALTERNATE = False
EXECUTOR = 'simple'


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(1007525)
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    x1 = torch.randn(4, 4, generator=g).to(torch.float32)
    return [x0, x1]


def build():
    torch.manual_seed(1007525)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
