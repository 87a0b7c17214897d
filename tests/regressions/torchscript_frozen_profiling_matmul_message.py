# jitamp_fuzz program: seed 112804, index 2288 (torch 2.13), shrunk by hand
# Reproduce: python tools/jitamp_fuzz --seed 112804 --index 2288
# Frozen on the profiling executor, a float16 input's matmul with a float32
# weight outside every scope (no region) raises "expected scalar type Half
# but found Float" where eager raises "expected m1 and m2 to have the same
# dtype" (frozen-mismatch:error). TorchScript's own: the program frozen
# without jitamp words it so too (test_fuzz_regressions.py,
# test_frozen_matmul_of_a_weight_raises_another_message_in_plain_torchscript); an early return
# before the scopes keeps plain TorchScript from scripting the program itself,
# so the runner asks its scope-free twin (runner.scope_free_twin):
# "known:frozen-plain-torchscript".
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, x1: Tensor, n: int) -> Tuple[Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        if n > 2:
            return (x1, sink)
        v19 = torch.matmul(x1.unsqueeze(0).expand(2, 4, 4), self.w).sum(0); sink.append(v19)
        with torch.autocast('cpu', dtype=torch.float16):
            v21 = torch.mm(v19, self.w); sink.append(v21)
        return (v21, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = False
OUTER = None
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = True
EXECUTOR = 'profiling'
ADD_AUTOCAST = None
THREADS = None


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(118530)
    flag = call % 2 == 1 if ALTERNATE else True
    x1 = torch.randn(4, 4, generator=g).to(torch.float16)
    n = 3 if flag else 1
    return [x1, n]


def build():
    torch.manual_seed(118530)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
