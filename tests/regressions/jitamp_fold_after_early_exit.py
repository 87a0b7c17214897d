# jitamp_fuzz program: seed 99, index 10316
# Reproduce: python tools/jitamp_fuzz --seed 99 --index 10316
# Fuzz finding 12: FoldStaticCasts took code after an early return inside a scope
# for code inside it (one branch of an if closed the scope, the other did not);
# once freezing folded the if, a conv's weight after the scope was cast under
# the scope's float16. Fixed: such a scope is "maybe closed"
# (csrc/jit_autocast/ir/open_scopes.h).
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


class Sub1(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, a: Tensor, sink: List[Tensor]) -> Tensor:
        v2 = a
        return v2


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))
        self.sub = Sub1()

    def forward(self, x0: Tensor, flag: bool) -> Tuple[Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        if bool(self.w.sum() > 0):
            with torch.autocast('cpu', dtype=torch.float16):
                v7 = x0
                if flag:
                    pass
                else:
                    if flag:
                        return (v7, sink)
        else:
            pass
        v18 = x0
        v19 = x0
        v20 = F.conv1d(self.w.unsqueeze(0), v19.unsqueeze(2), v18[0]).squeeze(0); sink.append(v20)
        return (x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = False
OUTER = None
SAVE = False
RUNTIME_JITAMP = True
ALTERNATE = False


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(559869)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    return [x0, flag]


def build():
    torch.manual_seed(559869)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
