# jitamp_fuzz program: seed 2602, index 2667 (torch 2.13)
# Reproduce: python tools/jitamp_fuzz --seed 2602 --index 2667
# Fuzz finding 21.
# Frozen, the reflect pad's slice v2 is a constant with w's values laid out
# with strides (6, 1), beside the constant w that linear reads at each call.
# Loading the standalone model (stock torch.jit.load) compiled its method
# again, and constant pooling merged the two (equal values; no complete
# types at load): linear read the view, 1 ulp off eager's float32 result.
# A frozen jitamp model saved and loaded with jitamp's loader did the same.
# Fixed: such a constant is read from a module attribute
# (KeepConstantsApartInModule, csrc/jit_autocast/passes/keep_constants_apart.h).
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, x0: Tensor, flag: bool, dt: torch.dtype, n: int) -> Tuple[Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        v2 = F.pad(self.w.unsqueeze(0), [1, 1], mode='reflect').squeeze(0)[:, 1:5]; sink.append(v2)
        v4 = self.lin(self.w); sink.append(v4)
        return (x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = False
OUTER = None
SAVE = False
RUNTIME_JITAMP = True
ALTERNATE = False
EXECUTOR = 'simple'


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(310516)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    dt = torch.bfloat16
    n = 3 if flag else 1
    return [x0, flag, dt, n]


def build():
    torch.manual_seed(310516)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
