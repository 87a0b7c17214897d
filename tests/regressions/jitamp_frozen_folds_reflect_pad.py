# jitamp_fuzz program: seed 99, index 7758
# Reproduce: python tools/jitamp_fuzz --seed 99 --index 7758
# Fuzz finding 11: a frozen model computed `F.pad(w.to(bfloat16), mode="reflect")`
# of a frozen weight once, at freezing, with autocast off; called under an
# eager autocast, eager runs the pad's reflection_pad1d in float32. Fixed:
# such ops get a fold barrier, settled at freezing
# (csrc/jit_autocast/ir/fold_barriers.h, passes/fold_static_casts.h).
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, x0: Tensor, flag: bool, n: int) -> Tuple[Tensor, Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        v2 = self.w.to(torch.bfloat16); sink.append(v2)
        v10 = F.pad(v2.unsqueeze(0), [1, 1], mode='reflect').squeeze(0)[:, 1:5]; sink.append(v10)
        return (x0, x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = False
OUTER = ('cpu', 'float16', True)
SAVE = False
RUNTIME_JITAMP = True
ALTERNATE = False


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(605499)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    n = 3 if flag else 1
    return [x0, flag, n]


def build():
    torch.manual_seed(605499)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
