# jitamp_fuzz program: seed 112807, index 68678 (torch 2.13), shrunk
# Reproduce: python tools/jitamp_fuzz --seed 112807 --index 68678
# On the profiling executor, with grad, eager calls a `@torch.jit.script`
# helper (TorchScript's, in eager too) whose plan, at its second call, runs
# the symbolic formula of abs: `self.sign()` of a complex tensor raises in
# backward. The program saved and loaded inlines the helper into a plan
# profiled where the flag skipped it, and returns (saved-mismatch:error).
# TorchScript's formula (test_fuzz_regressions.py,
# test_profiling_backward_formula_is_torchscripts):
# "known:profiling-backward-formula".
from typing import Dict, List, Optional, Tuple

import torch
import jitamp  # noqa: F401
import torch.nn.functional as F
from torch import Tensor


@torch.jit.script
def h1(a: Tensor, b: Tensor) -> Tensor:
    a = torch.linalg.eigvals(a.nan_to_num(0.0, 0.0, 0.0)).abs().unsqueeze(1) + a
    return a


def prog(x0: Tensor, flag: bool, dt: torch.dtype, n: int) -> Tuple[Tensor, Tensor, Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    v4 = x0
    if flag:
        return (x0, x0, v4, sink)
    v5 = h1(v4, v4); sink.append(v5)
    return (x0, x0, x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = True
OUTER = None
SAVE = True
RUNTIME_JITAMP = True
ALTERNATE = True
EXECUTOR = 'profiling'
ADD_AUTOCAST = None
THREADS = None


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(557525)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    dt = torch.float16
    n = 3 if flag else 1
    return [x0, flag, dt, n]


def build():
    torch.manual_seed(557525)
    return prog


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
