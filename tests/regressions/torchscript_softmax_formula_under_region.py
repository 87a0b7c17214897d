# jitamp_fuzz program: seed 2419, index 1371 (torch 2.4.1)
# Reproduce: python tools/jitamp_fuzz --seed 2419 --index 1371
# Profiling executor, with gradients, inside an eager float16 autocast region
# that changes nothing here (no op of the program has a CPU policy; its
# inputs are float16 already). From the second call the optimized plan's
# symbolic formula of softmax with dtype= raises "expected scalar type Float
# but found Half" where eager returns. Plain TorchScript does the same
# outside the region (torch 2.4.1 and 2.13): known:profiling-plain-torchscript.
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, x0: Tensor, x1: Tensor, x2: Tensor, dt: torch.dtype) -> Tuple[Tensor, Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        v1 = x2.sum(-1, keepdim=True) + x0; sink.append(v1)
        v4 = torch.softmax(v1, -1, dtype=torch.float32); sink.append(v4)
        return (x0, x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = True
OUTER = ('cpu', 'float16', True)
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = False
EXECUTOR = 'profiling'


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(613399)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float16)
    x1 = torch.randn(4, 4, generator=g).to(torch.float16)
    x2 = torch.randn(4, 4, generator=g).to(torch.float16)
    dt = torch.float16
    return [x0, x1, x2, dt]


def build():
    torch.manual_seed(613399)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
