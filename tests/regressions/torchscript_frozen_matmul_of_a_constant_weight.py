# jitamp_fuzz program: seed 112807, index 66799 (torch 2.13), shrunk
# Reproduce: python tools/jitamp_fuzz --seed 112807 --index 66799
# Frozen, a float16 batch (a float16 scope's matmul of the weight, expanded)
# times the float32 weight under a float32 scope (which eager turns off):
# eager's matmul folds the batch into an mm, "expected m1 and m2 to have the
# same dtype"; the frozen model's weight is a constant, which does not
# require grad, so its matmul takes the batched path: "expected scalar type
# Half but found Float" (frozen-mismatch:error). TorchScript's own: eager
# whose parameters do not require grad raises the frozen model's message
# (test_fuzz_regressions.py,
# test_frozen_matmul_of_a_weight_raises_another_message_in_plain_torchscript):
# "known:frozen-constant-weights".
from typing import Dict, List, Optional, Tuple

import torch
import jitamp  # noqa: F401
import torch.nn.functional as F
from torch import Tensor


class Sub1(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, a: Tensor, sink: List[Tensor]) -> Tensor:
        v3 = self.w @ self.w; sink.append(v3)
        ac4 = torch.autocast('cpu', dtype=torch.float32, cache_enabled=True)
        with ac4:
            v3 = torch.matmul(v3.unsqueeze(0).expand(2, 4, 4), self.w).sum(0); sink.append(v3)
        return v3


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))
        self.sub = Sub1()

    def forward(self, x0: Tensor, x1: Tensor, x2: Tensor, flag: bool, n: int) -> Tuple[Tensor, Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        with torch.amp.autocast('cpu', dtype=torch.float16, enabled=n > 2):
            v14 = self.sub(x0, sink); sink.append(v14)
        return (x0, x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = False
OUTER = None
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = False
EXECUTOR = 'simple'
ADD_AUTOCAST = None
THREADS = None


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(499252)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    x1 = torch.randn(4, 4, generator=g).to(torch.float32)
    x2 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    n = 3 if flag else 1
    return [x0, x1, x2, flag, n]


def build():
    torch.manual_seed(499252)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
