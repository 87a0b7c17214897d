# jitamp_fuzz program: seed 12, index 1028
# Reproduce: python tools/jitamp_fuzz --seed 12 --index 1028
# (TorchScript's) torch.linalg's LinAlgError, which TorchScript re-raises as
# RuntimeError, plain TorchScript too: known:torchscript-error-class.
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


def h1(a: Tensor, b: Tensor, sink: List[Tensor]) -> Tensor:
    b = a.to(torch.bfloat16); sink.append(b)
    v2 = torch.trace(b) + b; sink.append(v2)
    return v2


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, x0: Tensor, x1: Tensor, x2: Tensor, flag: bool, dt: torch.dtype, dev: str, bias: Optional[Tensor]) -> Tuple[Tensor, Tensor, Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        v4 = x2 - x1 * 0.5; sink.append(v4)
        for i7 in range(2):
            v4.mul_(2.0)
        v8 = torch.exp(v4); sink.append(v8)
        fut10 = torch.jit.fork(h1, v8, x1, sink); v9 = torch.jit.wait(fut10); sink.append(v9)
        with torch.autocast('cpu', dtype=dt):
            v12 = torch.linalg.inv(v9 + torch.eye(4, dtype=v9.dtype) * 4.0); sink.append(v12)
        return (x0, x0, x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = False
OUTER = None
SAVE = False
RUNTIME_JITAMP = True
ALTERNATE = False


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(2484)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    x1 = torch.randn(4, 4, generator=g).to(torch.float32)
    x2 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    dt = torch.float16
    dev = 'cuda'
    bias = torch.randn(4, generator=g) if flag else None
    return [x0, x1, x2, flag, dt, dev, bias]


def build():
    torch.manual_seed(2484)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
