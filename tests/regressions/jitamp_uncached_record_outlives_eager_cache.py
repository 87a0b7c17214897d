# jitamp_fuzz program: seed 2605, index 644 (torch 2.13)
# Reproduce: python tools/jitamp_fuzz --seed 2605 --index 644
# Fuzz finding 22.
# Frozen, under no_grad, each call inside the caller's own eager bfloat16
# region; the scope's lower precision alternates (float16, bfloat16). Call 1
# copied the frozen weight to float16 without eager's cache and recorded it;
# the caller's region exit cleared eager's cache, but not the record, and in
# call 2's bfloat16 scope the record put a float16 cast into the fresh cache
# for addmm's kernel: "self and mat2 must have the same dtype, but got Half
# and BFloat16" where eager returns (frozen-mismatch:error). Fixed: a marker
# cast in eager's cache tells that it was cleared (csrc/jit_autocast/ops/cast_ops.cpp).
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


class Sub39(torch.nn.Module):
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
        self.sub = Sub39()

    def forward(self, x0: Tensor, flag: bool, dev: str) -> Tuple[Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        v43 = x0
        with torch.cpu.amp.autocast(dtype=torch.float16 if flag else torch.bfloat16, enabled=bool(self.w.sum() > 0)):
            v43.copy_(self.w)
            v44 = torch.addmm(self.w, v43, x0); sink.append(v44)
        if not flag:
            return (self.w, sink)
        return (x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = False
OUTER = ('cpu', 'bfloat16', True)
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = True
EXECUTOR = 'simple'


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(106994)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    dev = 'cpu'
    return [x0, flag, dev]


def build():
    torch.manual_seed(106994)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
