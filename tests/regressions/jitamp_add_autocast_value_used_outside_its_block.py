# jitamp_fuzz program: seed 112702, index 124 (torch 2.13): scripted without jitamp, a return inside nested with blocks leaves a value used outside the If that defines it (TorchScript's exit transform); jitamp.add_autocast (ADD_AUTOCAST) failed in a graph copy ('not in scope. Run lint!') until repair_value_scopes (fuzz finding 24)
# Reproduce: python tools/jitamp_fuzz --seed 112702 --index 124
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


def h1(a: Tensor, b: Tensor, sink: List[Tensor]) -> Tensor:
    v2 = b if torch.amp.is_autocast_available('cpu') else a; sink.append(v2)
    return b


@torch.jit.script
def h3(a: Tensor, b: Tensor) -> Tensor:
    with torch.autocast('cpu', dtype=torch.float16, cache_enabled=False):
        v4 = F.conv_transpose2d(b.reshape(1, 1, 4, 4), b[:1, :1].reshape(1, 1, 1, 1)).reshape(4, 4)
        v5 = F.poisson_nll_loss(b, a.abs(), reduction='none')
    v6 = F.multi_margin_loss(a, torch.tensor([0, 1, 2, 3]), reduction='none').unsqueeze(1) + v4
    return v5


@torch.jit.ignore
def ign7(a: Tensor, b: Tensor) -> Tensor:
    r = torch.zeros(4, 4, dtype=torch.get_autocast_cpu_dtype()) + a
    return r


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, x0: Tensor) -> Tuple[Tensor, Tensor, Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        with torch.autocast('cuda', dtype=torch.bfloat16):
            with torch.autocast('cuda', dtype=torch.bfloat16):
                if bool(self.w.sum() > 0):
                    return (self.w, self.w, self.w, sink)
            v8 = ign7(x0, x0); sink.append(v8)
            v9 = torch.fft.rfft(v8).abs().sum(1, keepdim=True) + self.w; sink.append(v9)
            v9.add_(v8)
        v10 = torch.stack([v8[0], v8[1], x0[2], v8[3]]); sink.append(v10)
        if bool(self.w.sum() > 0):
            if bool(x0.sum() > 0):
                return (v8, v9, v10, sink)
            v9.copy_(x0)
            v11 = torch.bmm(v8.unsqueeze(0), x0.unsqueeze(0)).squeeze(0); sink.append(v11)
        else:
            v12 = x0.to(torch.get_autocast_gpu_dtype()); sink.append(v12)
        v9.clamp_(-1.0, 1.0)
        v13 = self.w.t(); sink.append(v13)
        v14 = F.cross_entropy(v9, torch.softmax(x0, 1)) + self.w; sink.append(v14)
        return (v14, v10, v14, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = True
OUTER = ('cpu', 'float16', True)
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = True
EXECUTOR = 'profiling'
ADD_AUTOCAST = 'bfloat16'


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(747331)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    return [x0]


def build():
    torch.manual_seed(747331)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
