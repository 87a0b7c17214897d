# jitamp_fuzz program: seed 112903, index 29408 (torch 2.13), shrunk by hand
# Reproduce: python tools/jitamp_fuzz --seed 112903 --index 29408
# (TorchScript's dead code elimination) Eager raises at the `if`'s
# condition (`gt` of a complex sum); the `if` only builds a Pair nothing
# reads, so TorchScript drops it with its condition (an object's attribute
# writes live with the object), and the scripted program raises later, at
# smooth_l1_loss of complex values: known:dead-code
# (runner._writes_a_fresh_object).
from typing import List, Tuple

import torch
import jitamp  # noqa: F401
import torch.nn.functional as F
from torch import Tensor


class Pair:
    def __init__(self, a: Tensor, b: Tensor):
        self.a = a
        self.b = b


def prog(x0: Tensor) -> Tuple[Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    v6 = torch.tanh(x0); sink.append(v6)
    with torch.autocast('cpu', dtype=torch.bfloat16):
        if bool(v6.sum() > 0):
            o9 = Pair(v6, x0)
        v11 = F.smooth_l1_loss(v6, v6, reduction='none'); sink.append(v11)
    return (v11, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = False
OUTER = ('cpu', 'bfloat16', True)
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = False
EXECUTOR = 'simple'
ADD_AUTOCAST = None
THREADS = None


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(908989)
    x0 = torch.randn(4, 4, generator=g, dtype=torch.complex64)
    return [x0]


def build():
    torch.manual_seed(908989)
    return prog


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
