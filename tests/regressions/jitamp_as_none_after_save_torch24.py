# jitamp_fuzz program: seed 20261123, index 85
# Reproduce: python tools/jitamp_fuzz --seed 20261123 --index 85
# Fuzz finding 5 (torch < 2.5): after a save and load, `with ac:` on an `as` name
# that eager binds to None raised before an earlier out= op's error: jitamp's
# raise was a prim::RaiseException, behind which TorchScript's front end made
# the rest unreachable and deleted the op. Fixed: jitamp::raise_as_eager.
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


class Sub6(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, a: Tensor, sink: List[Tensor]) -> Tensor:
        v8 = a
        return v8


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))
        self.sub = Sub6()

    def forward(self, x0: Tensor, x1: Tensor, x2: Tensor, flag: bool) -> Tuple[Tensor, Tensor, Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        v9 = torch.baddbmm(self.w.unsqueeze(0), x2.unsqueeze(0), x1.unsqueeze(0)).squeeze(0); sink.append(v9)
        with torch.autocast('cpu', dtype=torch.bfloat16, enabled=bool(x2.sum() > 0)) as ac10:
            torch.cat([self.w[:2], self.w[:2]], 0, out=v9)
        with ac10:
            pass
        return (x0, x0, x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = False
OUTER = None
SAVE = True
RUNTIME_JITAMP = True
ALTERNATE = False


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(17829)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.bfloat16)
    x1 = torch.randn(4, 4, generator=g).to(torch.float32)
    x2 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    return [x0, x1, x2, flag]


def build():
    torch.manual_seed(17829)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
