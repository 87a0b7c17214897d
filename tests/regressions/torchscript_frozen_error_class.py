# jitamp_fuzz program: seed 217, index 2683 (found on torch 2.15.0; every torch)
# Reproduce: python tools/jitamp_fuzz --seed 217 --index 2683
# Fuzz finding 16 (TorchScript's).
# Frozen (under no_grad) cat's out= dtype check raises c10's TypeError,
# which TorchScript's interpreter re-raises as RuntimeError, as it does
# unfrozen and without jitamp: "known:torchscript-error-class" (the frozen
# comparison did not ask known_difference).
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, x0: Tensor, x1: Tensor, x2: Tensor, flag: bool) -> Tuple[Tensor, Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        v1 = x1.sum(-1, keepdim=True) + x1; sink.append(v1)
        torch.cat([x0[:2], x1[:2]], 0, out=v1)
        return (x0, x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = True
OUTER = ('cpu', 'bfloat16', True)
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = False
EXECUTOR = 'profiling'


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(663444)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.bfloat16)
    x1 = torch.randint(-3, 4, (4, 4), generator=g)
    x2 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    return [x0, x1, x2, flag]


def build():
    torch.manual_seed(663444)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
