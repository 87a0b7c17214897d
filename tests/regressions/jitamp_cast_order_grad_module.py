# jitamp_fuzz program: seed 1, index 221
# Reproduce: python tools/jitamp_fuzz --seed 1 --index 221
# Fuzz finding 2, in a module: see jitamp_cast_order_grad.py (an op's casts in
# eager's argument-evaluation order).
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, x0: Tensor, flag: bool, dt: torch.dtype, n: int, bias: Optional[Tensor]) -> Tuple[Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        v26 = x0
        v27 = torch.mv(self.w, v26[0]).unsqueeze(1) + x0; sink.append(v27)
        v26 = torch.where(v27 > 0, v27, v27); sink.append(v26)
        with torch.autocast(device_type='cpu', dtype=dt):
            v28 = torch.addmm(v26, v26, v26); sink.append(v28)
            v28 = torch.linalg.vector_norm(v26, dim=[1], keepdim=True) + v28; sink.append(v28)
        return (x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = True
OUTER = None
SAVE = False
RUNTIME_JITAMP = True
ALTERNATE = False


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(157153)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    dt = torch.bfloat16
    n = 3 if flag else 1
    bias = torch.randn(4, generator=g) if flag else None
    return [x0, flag, dt, n, bias]


def build():
    torch.manual_seed(157153)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
