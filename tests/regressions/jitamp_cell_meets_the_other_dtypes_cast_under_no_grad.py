# jitamp_fuzz program: seed 112803, index 486 (torch 2.13), shrunk by hand
# Reproduce: python tools/jitamp_fuzz --seed 112803 --index 486
# Fuzz finding 25.
# Under no_grad, a float16 scope's matmul casts the weight self.w (jitamp:
# without eager's cache, recorded); a nested bfloat16 scope's rnn_relu_cell
# (no CPU policy: no smart cast) casts it in its own inner linear, where
# eager's cache hands it the float16 cast: "mat1 and mat2 must have the same
# dtype, but got Half and BFloat16". jitamp's cell got a fresh bfloat16 cast
# and returned (mismatch:error). Fixed: a region that meets a second lower
# precision puts its recorded casts in eager's cache and casts through it
# (UncachedCasts::note, csrc/jit_autocast/ops/cast_ops.cpp); and no-grad casts
# skip the cache only where jitamp's scope is outermost.
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, x0: Tensor, x1: Tensor, flag: bool) -> Tuple[Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        v3 = x1 * x0[0]; sink.append(v3)
        with torch.autocast(device_type='cpu', dtype=torch.float16 if flag else torch.bfloat16, cache_enabled=flag):
            v4 = torch.matmul(x1.unsqueeze(0).expand(2, 4, 4), self.w).sum(0); sink.append(v4)
            with torch.autocast(device_type='cpu', dtype=torch.bfloat16):
                v5 = torch.rnn_relu_cell(v3, self.w, v3, v3, self.w[0], v3[1]); sink.append(v5)
        return (v4, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = False
OUTER = 'no_grad'
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = True
EXECUTOR = 'profiling'
ADD_AUTOCAST = None
THREADS = None


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(767169)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.bfloat16)
    x1 = torch.randn(4, 4, generator=g).to(torch.bfloat16)
    return [x0, x1, flag]


def build():
    torch.manual_seed(767169)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
