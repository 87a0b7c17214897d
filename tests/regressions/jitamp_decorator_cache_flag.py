# jitamp_fuzz program: seed 11, index 2078
# Reproduce: python tools/jitamp_fuzz --seed 11 --index 2078
# Fuzz finding 3: a function decorated with @torch.autocast(...) was scripted as
# if its body were in a `with torch.autocast(...)` made at each call, so a dtype
# or cache flag the decorator leaves out came from the caller; eager's
# decorator object resolves them when it decorates. Fixed: the `with` gets the
# object's dtype and cache flag (python/jitamp/_decorators.py).
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


@torch.autocast('cpu', dtype=torch.float16)
def h1(a: Tensor, b: Tensor, sink: List[Tensor]) -> Tensor:
    v2 = torch.addmm(a, a, a, beta=0.5, alpha=2.0); sink.append(v2)
    return v2


def prog(x0: Tensor, x1: Tensor, flag: bool, bias: Optional[Tensor]) -> Tuple[Tensor, Tensor, Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    v31 = x0
    with torch.cpu.amp.autocast(dtype=torch.float16, enabled=flag, cache_enabled=flag):
        v32 = h1(x0, v31, sink); sink.append(v32)
    return (x0, x0, x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = True
OUTER = None
SAVE = False
RUNTIME_JITAMP = True
ALTERNATE = True


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(619718)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    x1 = torch.randn(4, 4, generator=g).to(torch.bfloat16)
    flag = flag
    bias = torch.randn(4, generator=g) if flag else None
    return [x0, x1, flag, bias]


def build():
    torch.manual_seed(619718)
    return prog


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
