# jitamp_fuzz program: seed 1327, index 4856 (torch 2.13)
# Reproduce: python tools/jitamp_fuzz --seed 1327 --index 4856
# Profiling executor, with gradients, float64 tensors, no autocast in what
# runs (the decorated helper h1 is never called). From the second call the
# plan's symbolic formula of softmax with dtype= raises "expected scalar type
# Double but found Float" where eager returns; plain TorchScript does the
# same: known:profiling-plain-torchscript.
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


@torch.autocast('cpu', dtype=torch.bfloat16)
def h1(a: Tensor, b: Tensor, sink: List[Tensor]) -> Tensor:
    return b


def prog(x0: Tensor, x1: Tensor, x2: Tensor, flag: bool) -> Tuple[Tensor, Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    v17 = torch.softmax(x0, -1, dtype=torch.float32); sink.append(v17)
    v18 = x1 - v17 * 0.5; sink.append(v18)
    return (x0, x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = True
OUTER = None
SAVE = False
RUNTIME_JITAMP = True
ALTERNATE = False
EXECUTOR = 'profiling'


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(284466)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float64)
    x1 = torch.randn(4, 4, generator=g).to(torch.float64)
    x2 = torch.randn(4, 4, generator=g).to(torch.float64)
    flag = flag
    return [x0, x1, x2, flag]


def build():
    torch.manual_seed(284466)
    return prog


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
