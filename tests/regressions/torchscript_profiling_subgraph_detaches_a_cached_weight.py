# jitamp_fuzz program: seed 112901, index 70468 (torch 2.13), shrunk
# Reproduce: python tools/jitamp_fuzz --seed 112901 --index 70468
# jitamp.add_autocast(float16) on the profiling executor. Under a bfloat16
# scope an rnn cell's inner linear puts the weight's bfloat16 cast in eager's
# cache; the matmul of the weight after it, in the float16 region, meets that
# entry in eager ("addmv input tensors must have the same dtype"). In the
# plan the matmul is in a differentiable subgraph, which runs on detached
# inputs, never served by the cache: it casts the weight afresh and returns
# (add-autocast-mismatch:error). TorchScript's own
# (test_fuzz_regressions.py,
# test_profiling_subgraph_detaches_inputs_from_the_cast_cache_is_torchscripts);
# the simple executor gives eager's: "known:profiling-detached-cache".
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

    def forward(self, x0: Tensor, flag: bool, dt: torch.dtype, n: int) -> Tuple[Tensor, Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        with torch.cpu.amp.autocast(enabled=flag):
            v8 = torch.rnn_relu_cell(self.w, self.w, x0, x0, self.w[0], self.w[1]); sink.append(v8)
            v9 = x0
        v9 = torch.matmul(self.w, self.w[0]).unsqueeze(1) * v9; sink.append(v9)
        return (x0, x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = False
OUTER = None
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = True
EXECUTOR = 'profiling'
ADD_AUTOCAST = 'float16'
THREADS = None


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(423331)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    dt = torch.bfloat16
    n = 3 if flag else 1
    return [x0, flag, dt, n]


def build():
    torch.manual_seed(423331)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
