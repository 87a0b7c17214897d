# jitamp_fuzz program: seed 12, index 2783
# Reproduce: python tools/jitamp_fuzz --seed 12 --index 2783
# Fuzz finding 6: TorchScript's interpreter emits a loop with one carried value,
# read once, inline where it is read, and so moves a value the loop reads out
# of its register in the first iteration ("Expected Tensor but got None"), on
# jitamp's simple executor with constant trip counts too. Fixed:
# KeepLoopsOutOfLine (csrc/jit_autocast/repairs/keep_loops_out_of_line.h).
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


def prog(x0: Tensor, flag: bool, dt: torch.dtype) -> Tuple[Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    v1 = x0
    v8 = v1.to(v1.dtype); sink.append(v8)
    for i11 in range(2):
        with torch.autocast('cpu', dtype=torch.bfloat16 if flag else dt, enabled=bool(v8.sum() > 0)):
            v1 = x0
    for i15 in range(2):
        v8 = torch.linalg.vector_norm(v1, dim=[1], keepdim=True) + v8; sink.append(v8)
        v1 = torch.cat([v8, x0], 1)[:, 2:6]; sink.append(v1)
    with torch.autocast('cpu', dtype=torch.bfloat16 if flag else dt):
        v17 = torch.log(v8.abs() + 1.0); sink.append(v17)
    return (x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = False
OUTER = None
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = False


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(784881)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    dt = torch.bfloat16
    return [x0, flag, dt]


def build():
    torch.manual_seed(784881)
    return prog


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
