# jitamp_fuzz program: seed 20261125, index 1031
# Reproduce: python tools/jitamp_fuzz --seed 20261125 --index 1031
# Fuzz finding 14 (TorchScript's): under a caller's float16 CPU autocast, a bmm
# whose result nothing reads raises eager's "expected scalar type Half but
# found Float"; once freezing folded the casts of its static scope, dead code
# elimination removed the loop around it, so the frozen model returns:
# known:dead-code then. Since jitamp's plans unroll loops (as TorchScript's
# optimized plans do), the @torch.jit.script callee h1's own plan, which
# eager calls, unrolls the loop and its dead code elimination removes the
# bmm too: eager returns, and every jitamp model agrees (ok).
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


@torch.jit.script
def h1(a: Tensor, b: Tensor) -> Tensor:
    a = torch.baddbmm(b.unsqueeze(0), a.unsqueeze(0), a.unsqueeze(0)).squeeze(0)
    v4 = torch.linalg.inv(a + torch.eye(4, dtype=a.dtype) * 4.0)
    with torch.autocast('cpu', dtype=torch.float32, enabled=True):
        for i6 in range(2):
            v4 = torch.bmm(a.unsqueeze(0), v4.unsqueeze(0)).squeeze(0)
    return a


def h7(a: Tensor, b: Tensor, sink: List[Tensor]) -> Tensor:
    v8 = h1(a, a); sink.append(v8)
    return a


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, x0: Tensor, x1: Tensor, flag: bool, dt: torch.dtype, n: int, bias: Optional[Tensor]) -> Tuple[Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        v11 = h7(x0, x1, sink); sink.append(v11)
        return (x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = False
OUTER = ('cpu', 'float16', True)
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = False


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(672944)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    x1 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    dt = torch.float16
    n = 3 if flag else 1
    bias = torch.randn(4, generator=g) if flag else None
    return [x0, x1, flag, dt, n, bias]


def build():
    torch.manual_seed(672944)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
