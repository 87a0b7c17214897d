# jitamp_fuzz program: seed 112901, index 20237 (torch 2.13), shrunk
# Reproduce: python tools/jitamp_fuzz --seed 112901 --index 20237
# Eager's cast cache hands addmm, in the caller's bfloat16 region, the
# float16 cast of the weight a float16 scope made ("self and mat2 must have
# the same dtype"); the frozen model's weight is a constant, which the cache
# never serves, so it runs on and raises a submodule's assert further on
# (frozen-mismatch:error). Eager with the cache off raises that assert too,
# as Python's AssertionError where TorchScript raises torch.jit.Error (a
# known difference of its own): "known:frozen-cast-cache".
from typing import Dict, List, Optional, Tuple

import torch
import jitamp  # noqa: F401
import torch.nn.functional as F
from torch import Tensor


class Sub5(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, a: Tensor, sink: List[Tensor]) -> Tensor:
        assert bool(a.abs().max() < 8.0), 'fuzz: a out of range'
        return a


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))
        self.sub = Sub5()

    def forward(self, x0: Tensor, x1: Tensor, flag: bool) -> Tuple[Tensor, Tensor, Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        with torch.autocast('cpu', dtype=torch.float16 if flag else torch.bfloat16):
            v8 = torch.matmul(x1.unsqueeze(0).expand(2, 4, 4), self.w).sum(0); sink.append(v8)
            v9 = x0
        v11 = torch.addmm(x1, x1, self.w, beta=0.5, alpha=2.0); sink.append(v11)
        v13 = F.linear(x1[:, :2], v11[:, :2], v9[0]); sink.append(v13)
        v15 = F.mse_loss(v13, x0, reduction='none'); sink.append(v15)
        v16 = self.sub(v15, sink); sink.append(v16)
        return (x0, x0, x0, sink)


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
    g = torch.Generator().manual_seed(446300)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.bfloat16)
    x1 = torch.randn(4, 4, generator=g).to(torch.bfloat16)
    flag = flag
    return [x0, x1, flag]


def build():
    torch.manual_seed(446300)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
