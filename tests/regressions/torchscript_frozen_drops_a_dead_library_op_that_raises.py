# jitamp_fuzz program: seed 242, index 6608 (found on torch 2.4.1; every torch),
# as found. Reproduce: python tools/jitamp_fuzz --seed 242 --index 6608
# Fuzz finding 15 (TorchScript's).
# The op that raises (torch.layer_norm of mixed dtypes under a float16
# autocast) is in torch.nn.functional, inlined, and alive in the scripted
# helper: `F.l1_loss(v8, v8)` warns when its two sizes differ, which reads
# v8. Freezing folds that check (both sizes are one value's) and drops the
# chain with it, as it does without jitamp: "known:dead-code".
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


@torch.jit.script
def h4(a: Tensor, b: Tensor) -> Tensor:
    v5 = F.group_norm(b.unsqueeze(0), 2).squeeze(0)
    v7 = F.layer_norm(b, [4], a[0], b[1])
    v8 = F.conv2d(v7.reshape(1, 1, 4, 4), a[:3, :3].reshape(1, 1, 3, 3), a[0, :1], 1, 1).reshape(4, 4)
    v8 = F.l1_loss(v8, v8) + b
    return b


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, x0: Tensor, x1: Tensor, flag: bool, bias: Optional[Tensor]) -> Tuple[Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        v9 = h4(x1, self.w); sink.append(v9)
        return (x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = False
OUTER = ('cpu', 'float16', True)
SAVE = False
RUNTIME_JITAMP = True
ALTERNATE = False
EXECUTOR = 'simple'


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(594302)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float16)
    x1 = torch.randn(4, 4, generator=g).to(torch.float16)
    flag = flag
    bias = torch.randn(4, generator=g) if flag else None
    return [x0, x1, flag, bias]


def build():
    torch.manual_seed(594302)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
