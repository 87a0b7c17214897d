# jitamp_fuzz program: seed 112902, index 46442 (shrunk by hand)
# Reproduce: python tools/jitamp_fuzz --seed 112902 --index 46442
# Profiling executor, with gradients, a float16 input, no eager region. From
# the second call the plan's symbolic formula of softmax with dtype=float32
# raises "expected scalar type Float but found Half" in backward, where
# eager returns. The softmax, and all it reads, run outside every autocast
# scope (jitamp casts nothing there); the one scope, after it, casts its
# matmul, so plain TorchScript is no reference for values. Plain TorchScript
# raises the same error at the same call: known:profiling-plain-torchscript
# (runner._plain_raises_the_same, runner._formula_reads_no_scope).
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


def prog(x0: Tensor) -> Tuple[Tensor, Tensor]:
    v2 = torch.softmax(x0.clamp(-1.0, 1.0), -1, dtype=torch.float32)
    with torch.autocast('cpu', dtype=torch.bfloat16):
        v1 = x0 @ x0
    return v2, v1


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = True
OUTER = None
SAVE = False
RUNTIME_JITAMP = True
ALTERNATE = False
EXECUTOR = 'profiling'


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(265131)
    x0 = torch.randn(4, 4, generator=g).to(torch.float16)
    return [x0]


def build():
    torch.manual_seed(265131)
    return prog


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
