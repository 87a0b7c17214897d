# jitamp_fuzz program: seed 1, index 351
# Reproduce: python tools/jitamp_fuzz --seed 1 --index 351
# Fuzz finding 2: jitamp cast an op's arguments first to last; eager's autocast
# kernel casts them in C++ argument-evaluation order (last first with GCC), so
# backward summed the gradients of a value the op takes twice in another order.
# Fixed: casts are inserted in eager's order, probed once
# (eagerCastsLastArgumentFirst, csrc/jit_autocast/ops/cast_ops.h); a model saved
# under another compiler's order gets this torch's at load
# (csrc/jit_autocast/passes/order_casts.h).
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


def prog(x0: Tensor, x1: Tensor, flag: bool, dt: torch.dtype, n: int, dev: str) -> Tuple[Tensor, Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    v1 = x0
    v2 = torch.einsum('ij,jk->ik', x1, v1); sink.append(v2)
    v4 = F.margin_ranking_loss(v2, v2, x1, reduction='none'); sink.append(v4)
    return (x0, x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = True
OUTER = ('cpu', 'float16', True)
SAVE = False
RUNTIME_JITAMP = True
ALTERNATE = False


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(305567)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    x1 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    dt = torch.float16
    n = 3 if flag else 1
    dev = 'cpu'
    return [x0, x1, flag, dt, n, dev]


def build():
    torch.manual_seed(305567)
    return prog


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
