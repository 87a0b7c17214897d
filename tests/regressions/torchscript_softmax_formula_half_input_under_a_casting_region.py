# jitamp_fuzz program: seed 77112026, index 2718
# Reproduce: python tools/jitamp_fuzz --seed 77112026 --index 2718
# Profiling executor, with gradients, a float16 input inside an eager
# bfloat16 region that casts the addmm (so plain TorchScript, which runs the
# region's ops uncast, is no reference for values): from the second call the
# optimized plan's symbolic formula of softmax with dtype= raises "expected
# scalar type Float but found Half" where eager returns. Plain TorchScript
# raises the same error at the same call in the same region, and without
# any autocast too (tests/test_fuzz_regressions.py): TorchScript's own,
# known:profiling-plain-torchscript (runner._plain_raises_the_same).
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


def prog(x0: Tensor) -> Tuple[Tensor, Tensor, Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    v10 = x0
    v14 = torch.tanh(v10); sink.append(v14)
    v14 = torch.softmax(v14, -1, dtype=torch.float32); sink.append(v14)
    v16 = torch.addmm(x0, v14, v14); sink.append(v16)
    return (x0, x0, x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = True
OUTER = ('cpu', 'bfloat16', True)
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = False
EXECUTOR = 'profiling'


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(918117)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float16)
    return [x0]


def build():
    torch.manual_seed(918117)
    return prog


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
