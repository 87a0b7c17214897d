# jitamp_fuzz program: seed 1141, index 6923 (torch 2.13)
# Reproduce: python tools/jitamp_fuzz --seed 1141 --index 6923
# Fuzz finding 18. Now fixed (the runner says ok): mse_loss and vector_norm run in
# float32 under the region, so cat and the adds that read them read every
# tensor through a boundary (csrc/jit_autocast/profiling/insert_autodiff_boundaries.h):
# cat's formula no longer saves the view, and the plan raises eager's error.
# As found:
# Profiling executor, with gradients: v3.clamp_ in a loop changes a tensor
# backward needs. Eager's error names the one its ClampBackward saved
# ([4, 4], "output 0 of Clamp1"); from the second call the optimized plan's
# symbolic formula for cat saves the view v3[:2] and names it
# ([2, 4], "output 0 of AsStrided"). Plain TorchScript does the same.
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


class Sub1(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, a: Tensor, sink: List[Tensor]) -> Tensor:
        return a


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))
        self.sub = Sub1()

    def forward(self, x0: Tensor, x1: Tensor, flag: bool, dt: torch.dtype, n: int, bias: Optional[Tensor]) -> Tuple[Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        v3 = F.mse_loss(self.w, x0, reduction='none'); sink.append(v3)
        k12 = 0
        while k12 < 2:
            k12 += 1
            v3.clamp_(-1.0, 1.0)
            v7 = torch.linalg.vector_norm(v3, dim=[1], keepdim=True) + self.w; sink.append(v7)
            v9 = x0
            v10 = torch.cat([x1[:1], v3[:2], v9[:1]], 0); sink.append(v10)
            v9 = v3 + v10; sink.append(v9)
        return (x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = True
OUTER = ('cpu', 'bfloat16', True)
SAVE = False
RUNTIME_JITAMP = True
ALTERNATE = False
EXECUTOR = 'profiling'


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(804469)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    x1 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    dt = torch.bfloat16
    n = 3 if flag else 1
    bias = torch.randn(4, generator=g) if flag else None
    return [x0, x1, flag, dt, n, bias]


def build():
    torch.manual_seed(804469)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
