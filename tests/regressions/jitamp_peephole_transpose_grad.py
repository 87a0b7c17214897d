# jitamp_fuzz program: seed 7, index 6956
# Reproduce: python tools/jitamp_fuzz --seed 7 --index 6956
# Fuzz finding 9: TorchScript's preoptimization folds `v3.t().t()` (two calls of h1) to v3, so
# backward sums x0's float64 gradient in another order. Fixed: jitamp makes that graph
# itself, without the fold (csrc/jit_autocast/passes/peephole_keeping_transposes.h).
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


def h1(a: Tensor, b: Tensor, sink: List[Tensor]) -> Tensor:
    b = b.t(); sink.append(b)
    return b


def prog(x0: Tensor, flag: bool, dt: torch.dtype) -> Tuple[Tensor, Tensor, Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    v2 = h1(x0, x0, sink); sink.append(v2)
    v3 = torch.mv(v2, v2[0]).unsqueeze(1) + v2; sink.append(v3)
    v4 = h1(v2, v3, sink); sink.append(v4)
    v5 = h1(v4, v4, sink); sink.append(v5)
    v13 = torch.linalg.vecdot(v4, v3).unsqueeze(1) + v4; sink.append(v13)
    return (v13, v13, v5, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = True
OUTER = None
SAVE = False
RUNTIME_JITAMP = True
ALTERNATE = False


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(227731)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float64)
    flag = flag
    dt = torch.bfloat16
    return [x0, flag, dt]


def build():
    torch.manual_seed(227731)
    return prog


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
