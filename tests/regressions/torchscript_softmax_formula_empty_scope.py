# jitamp_fuzz program: seed 2152, index 1402 (torch 2.15; 2.13 too)
# Reproduce: python tools/jitamp_fuzz --seed 2152 --index 1402
# Profiling executor, with gradients, a bfloat16 input. From the second call
# the plan's symbolic formula of softmax with dtype=float32 raises "expected
# scalar type Float but found BFloat16" in backward; plain TorchScript, with
# no autocast at all, does the same. The one autocast scope encloses no op
# (`v1 = x0`), so the runner still takes plain TorchScript as the reference
# (runner._encloses_no_op).
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


def prog(x0: Tensor, flag: bool, dt: torch.dtype, dev: str) -> Tuple[Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    with torch.autocast('cpu', dtype=torch.bfloat16):
        v1 = x0
    v1 = torch.softmax(v1, -1); sink.append(v1)
    v3 = torch.softmax(v1, -1, dtype=torch.float32); sink.append(v3)
    return (x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = True
OUTER = None
SAVE = False
RUNTIME_JITAMP = True
ALTERNATE = False
EXECUTOR = 'profiling'


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(858921)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.bfloat16)
    flag = flag
    dt = torch.bfloat16
    dev = 'cuda'
    return [x0, flag, dt, dev]


def build():
    torch.manual_seed(858921)
    return prog


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
