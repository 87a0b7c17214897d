# jitamp_fuzz program: seed 2419, index 6649 (torch 2.4.1)
# Reproduce: python tools/jitamp_fuzz --seed 2419 --index 6649
# Profiling executor, with gradients, float64 tensors (which autocast never
# casts) inside an eager float16 autocast region. From the second call the
# optimized plan raises autograd's out= error at softmax(out=) in forward;
# eager runs it and raises in backward (a saved tensor modified in place).
# Plain TorchScript does the same outside the region (torch 2.4.1 and 2.13):
# known:profiling-plain-torchscript.
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


def prog(x0: Tensor, flag: bool) -> Tuple[Tensor, Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    v5 = x0
    v6 = torch.bmm(v5.unsqueeze(0), x0.unsqueeze(0)).squeeze(0); sink.append(v6)
    torch.softmax(v6, 1, out=v6)
    v14 = F.group_norm(v6.unsqueeze(0), 2).squeeze(0); sink.append(v14)
    v6.clamp_(-1.0, 1.0)
    return (x0, x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = True
OUTER = ('cpu', 'float16', True)
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = False
EXECUTOR = 'profiling'


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(374930)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float64)
    flag = flag
    return [x0, flag]


def build():
    torch.manual_seed(374930)
    return prog


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
