# jitamp_fuzz program: seed 112902, index 83444 (torch 2.13), shrunk
# Reproduce: python tools/jitamp_fuzz --seed 112902 --index 83444
# On the profiling executor, with grad: a float16 input plus a complex one.
# From the plan's third call, add's symbolic formula hands the float16
# operand the complex gradient, which autograd's check refuses ("Expected
# isFloatingType(grad.scalar_type()) || (input_is_complex ==
# grad_is_complex)"), where eager's autograd takes its real part
# (mismatch:error). TorchScript's own (test_fuzz_regressions.py,
# test_profiling_real_gradient_of_a_complex_sum_is_torchscripts); the simple
# executor gives eager's: "known:profiling-complex-grad".
from typing import Dict, List, Optional, Tuple

import torch
import jitamp  # noqa: F401
import torch.nn.functional as F
from torch import Tensor


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, x0: Tensor, x1: Tensor, x2: Tensor, flag: bool, dt: torch.dtype, dev: str) -> Tuple[Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        v5 = x0.clamp(-1.0, 1.0); sink.append(v5)
        v6 = v5 + x1[:, :1]; sink.append(v6)
        if not flag:
            v7 = self.lin(x2); sink.append(v7)
        return (x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = True
OUTER = ('cpu', 'float16', True)
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = True
EXECUTOR = 'profiling'
ADD_AUTOCAST = None
THREADS = None


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(990884)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float16)
    x1 = torch.randn(4, 4, generator=g, dtype=torch.complex64)
    x2 = torch.randint(-3, 4, (4, 4), generator=g)
    flag = flag
    dt = torch.bfloat16
    dev = 'cuda'
    return [x0, x1, x2, flag, dt, dev]


def build():
    torch.manual_seed(990884)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
