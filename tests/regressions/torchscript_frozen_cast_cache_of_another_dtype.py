# jitamp_fuzz program: seed 1327, index 139 (torch 2.13)
# Reproduce: python tools/jitamp_fuzz --seed 1327 --index 139
# (torch.jit.freeze's: weights become constants) A known deviation of frozen models.
# A module with scopes of two lower-precision dtypes, frozen. Eager's module
# gets, under one scope, its cast cache's cast of a weight made under the
# other dtype and raises; the frozen model's weights are constants, which
# eager's cache never serves, and it casts afresh: known:frozen-cast-cache
# (docs/runtime-model.md, "The cast cache").
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, x0: Tensor, flag: bool, dev: str) -> Tuple[Tensor, Tensor, Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        with torch.cpu.amp.autocast(dtype=torch.bfloat16, enabled=flag):
            v2 = self.lin(self.w); sink.append(v2)
        v4 = F.linear(self.w, v2); sink.append(v4)
        return (x0, x0, x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = False
OUTER = ('cpu', 'float16', True)
SAVE = False
RUNTIME_JITAMP = True
ALTERNATE = False
EXECUTOR = 'simple'


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(101881)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.bfloat16)
    flag = flag
    dev = 'cpu'
    return [x0, flag, dev]


def build():
    torch.manual_seed(101881)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
