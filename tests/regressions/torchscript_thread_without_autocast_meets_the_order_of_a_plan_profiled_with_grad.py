# jitamp_fuzz program: seed 281207, index 21856 (torch 2.13): two threads call the function, one inside a bfloat16 region (OUTER), the other without autocast, after the comparison's calls in OUTER with gradients; the second's profiling plan runs rnn_relu_cell before the matmul eager raises at (expected m1 and m2 to have the same dtype) and raises mm's error from it; the same program on the simple executor gives eager's, and called alone without autocast it meets no such plan: known:profiling-error-order (runner, the threads' branch of _profiling_plans_own)
# Reproduce: python tools/jitamp_fuzz --seed 281207 --index 21856
from typing import Dict, List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


def h1(a: Tensor, b: Tensor, sink: List[Tensor]) -> Tensor:
    b = torch.matmul(a.unsqueeze(0).expand(2, 4, 4), b).sum(0); sink.append(b)
    v2 = b - a * 0.5; sink.append(v2)
    if bool(v2.sum() > 4.0):
        raise ValueError('fuzz: v2 too large')
    v2.add_(v2)
    return v2


def prog(x0: Tensor, x1: Tensor, flag: bool, dt: torch.dtype, dev: str, bias: Optional[Tensor]) -> Tuple[Tensor, Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    v3 = F.binary_cross_entropy(torch.sigmoid(x1), torch.sigmoid(x1), reduction='none'); sink.append(v3)
    v4 = x0.to(torch.bfloat16); sink.append(v4)
    v5 = v4 @ v3; sink.append(v5)
    v6 = torch.rnn_relu_cell(v3, v3, v4, v4, v3[0], v3[1]); sink.append(v6)
    return (v5, x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = True
OUTER = ('cpu', 'bfloat16', True)
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = False
EXECUTOR = 'profiling'
ADD_AUTOCAST = None
THREADS = (None,)


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(639508)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    x1 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    dt = torch.bfloat16
    dev = 'cpu'
    bias = torch.randn(4, generator=g) if flag else None
    return [x0, x1, flag, dt, dev, bias]


def build():
    torch.manual_seed(639508)
    return prog

