# jitamp_fuzz program: seed 112902, index 22763 (torch 2.13): a fork makes the gradients' cat in gru_cell's unsafe_chunk backward (autocast's promote of a float16 and a bfloat16 gradient: "Unexpected floating ScalarType") come before eager's in-place check; direct calls give eager's error (another node's name)
# Reproduce: python tools/jitamp_fuzz --seed 112902 --index 22763
from typing import Dict, List, Optional, Tuple

import torch
import jitamp  # noqa: F401
import torch.nn.functional as F
from torch import Tensor


@torch.jit.script
def h5(a: Tensor, b: Tensor) -> Tensor:
    v10 = a.index_copy(0, torch.tensor([1, 3]), b[:2])
    v12 = a
    v13 = F.binary_cross_entropy(torch.sigmoid(v12), torch.sigmoid(v10), reduction='none')
    return v13


def prog(x0: Tensor, flag: bool, dt: torch.dtype) -> Tuple[Tensor, Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    with torch.autocast('cpu', dtype=torch.float16, enabled=True):
        v20 = x0
        v22 = x0
        v23 = torch.gru_cell(x0, v22, v20.repeat(3, 1), v22.repeat(3, 1)); sink.append(v23)
        v25 = torch.matmul(x0, x0[0]).unsqueeze(1) * x0; sink.append(v25)
        v26 = torch.addcmul(v25, v25, v25, value=0.5); sink.append(v26)
    v25.mul_(2.0)
    v42 = x0
    v43 = h5(x0, v26); sink.append(v43)
    v46 = v43.t(); sink.append(v46)
    fut50 = torch.jit.fork(h5, v46, v42); v49 = torch.jit.wait(fut50); sink.append(v49)
    return (x0, x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = True
OUTER = ('cpu', 'bfloat16', True)
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = False
EXECUTOR = 'simple'
ADD_AUTOCAST = None
THREADS = None


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(752054)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    dt = torch.float16
    return [x0, flag, dt]


def build():
    torch.manual_seed(752054)
    return prog


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
