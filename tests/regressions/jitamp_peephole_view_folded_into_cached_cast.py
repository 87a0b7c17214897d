# jitamp_fuzz program: seed 2027, index 6342
# Reproduce: python tools/jitamp_fuzz --seed 2027 --index 6342
# Fuzz finding 10: TorchScript's peephole pass folds `x0.t().t()` to `x0` in the graph
# the simple executor runs; both mm inputs are then x0, whose bf16 cast eager's
# cache shares, where eager casts x0 (cached) and its view (uncached) apart:
# backward sums the two gradients in bfloat16, eager in float32.
# Fixed: jitamp makes that graph itself, without the fold (csrc/jit_autocast/passes/peephole_keeping_transposes.h).
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


def prog(x0: Tensor, flag: bool, dt: torch.dtype, n: int) -> Tuple[Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    v2 = x0.t(); sink.append(v2)
    v3 = v2.t(); sink.append(v3)
    v8 = x0
    with torch.autocast('cpu', enabled=n > 2) as ac10:
        v12 = torch.mm(v8, v3); sink.append(v12)
    return (x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = True
OUTER = None
SAVE = False
RUNTIME_JITAMP = True
ALTERNATE = False


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(621304)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    dt = torch.bfloat16
    n = 3 if flag else 1
    return [x0, flag, dt, n]


def build():
    torch.manual_seed(621304)
    return prog


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
