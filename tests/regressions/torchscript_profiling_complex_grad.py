# jitamp_fuzz program: seed 112805, index 4770 (torch 2.13), shrunk by hand
# Reproduce: python tools/jitamp_fuzz --seed 112805 --index 4770
# With grad, on the profiling executor, the gradient of a complex input
# differs from eager's from the plan's second call (mismatch:grad):
# TorchScript's symbolic derivative formulas conjugate nothing (mul, mm,
# addcmul, pow of complex tensors; plain TorchScript too:
# test_fuzz_regressions.py, test_profiling_complex_grad_is_torchscripts).
# The same program on the simple executor (jitamp's plan, eager's autograd)
# gives eager's gradients: "known:profiling-complex-grad".
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


def prog(x0: Tensor, x1: Tensor) -> Tuple[Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    with torch.autocast('cpu', dtype=torch.bfloat16):
        v1 = torch.mm(x0, x0); sink.append(v1)
    v2 = x1 * x1 * 0.5; sink.append(v2)
    return (v2, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = True
OUTER = None
SAVE = False
RUNTIME_JITAMP = True
ALTERNATE = False
EXECUTOR = 'profiling'
ADD_AUTOCAST = None
THREADS = None


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(742884)
    x0 = torch.randn(4, 4, generator=g).to(torch.bfloat16)
    x1 = torch.randn(4, 4, generator=g, dtype=torch.complex64)
    return [x0, x1]


def build():
    torch.manual_seed(742884)
    return prog


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
