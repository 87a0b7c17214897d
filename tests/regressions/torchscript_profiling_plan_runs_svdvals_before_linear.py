# jitamp_fuzz program: seed 112603, index 6771 (torch 2.13, an older generator), shrunk
# On the profiling executor, with grad, two float16 errors in one loop: a
# linear of a float16 value and a float32 weight (in a scope that the flag
# turns off) and svdvals of it (no float16 kernel). Eager raises linear's; the
# optimized plan (from the third call) runs svdvals first and raises its
# NotImplementedError (mismatch:error). TorchScript's own: its symbolic
# autodiff moves svdvals, which it leaves out of the differentiable subgraph,
# before the linear (test_fuzz_regressions.py,
# test_profiling_plan_raises_a_later_ops_error_first_in_plain_torchscript);
# the program on the simple executor gives eager's:
# "known:profiling-error-order".
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, x0: Tensor, x1: Tensor, flag: bool) -> Tuple[Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        v1 = self.w + x1; sink.append(v1)
        with torch.cpu.amp.autocast(dtype=torch.float16, cache_enabled=flag):
            v15 = self.lin(x0); sink.append(v15)
        if bool(v1.sum() > 0):
            with torch.autocast('cpu', dtype=torch.float16, enabled=not flag):
                for i19 in range(2):
                    v17 = self.lin(v15); sink.append(v17)
                    v15 = torch.linalg.svdvals(v15).unsqueeze(1) + x0; sink.append(v15)
                    v18 = v17.t(); sink.append(v18)
        v25 = torch.stack([x0, x0, x1])[1]; sink.append(v25)
        return (v25, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = False
OUTER = None
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = True
EXECUTOR = 'profiling'


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(485582)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    x1 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    return [x0, x1, flag]


def build():
    torch.manual_seed(485582)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
