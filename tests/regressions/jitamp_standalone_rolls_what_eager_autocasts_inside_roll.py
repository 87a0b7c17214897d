# jitamp_fuzz program: seed 271129, index 6553
# Reproduce: python tools/jitamp_fuzz --seed 271129 --index 6553
# A scripted helper rolls a float16 input inside a bfloat16 scope. Eager
# raises autocast's "Unexpected floating ScalarType in
# at::autocast::prioritize": roll has no autocast kernel, but its CPU
# kernel concatenates two slices with aten::cat, a promote op under CPU
# autocast, which refuses float16 in a bfloat16 region. The standalone
# model (jitamp.freeze(standalone=True)), which runs a scope's ops with the
# state off once its casts are in the graph, returned the roll instead
# (standalone-mismatch:error). Now roll is on policy_table.h's
# kernelCallsAutocastOps list, an obstacle for a standalone model (and a
# fold barrier): standalone refuses the module, and every other model
# raises eager's error.
from typing import Dict, List, Optional, Tuple

import torch
import jitamp  # noqa: F401
import torch.nn.functional as F
from torch import Tensor


def h1(a: Tensor, b: Tensor, sink: List[Tensor]) -> Tensor:
    tu2 = (b, a)
    v3 = torch.roll(tu2[0], int(b.argmax()) % 4, 1); sink.append(v3)
    return b


class Sub4(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, a: Tensor, sink: List[Tensor]) -> Tensor:
        return a


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))
        self.sub = Sub4()

    def forward(self, x0: Tensor, flag: bool) -> Tuple[Tensor, Tensor, Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        with torch.autocast(device_type='cpu', dtype=torch.bfloat16, cache_enabled=flag):
            v8 = h1(x0, x0, sink); sink.append(v8)
        return (x0, x0, x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = False
OUTER = None
SAVE = False
RUNTIME_JITAMP = True
ALTERNATE = False
EXECUTOR = 'simple'
ADD_AUTOCAST = None
THREADS = None


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(592974)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float16)
    flag = flag
    return [x0, flag]


def build():
    torch.manual_seed(592974)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
