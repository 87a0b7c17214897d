# jitamp_fuzz program: seed 2159, index 7729 (torch 2.15; 2.13 too)
# Reproduce: python tools/jitamp_fuzz --seed 2159 --index 7729
# Fuzz finding 19.
# Profiling executor, with gradients, a float16 input under an eager bfloat16
# region. quantile runs in float32 there (its CPU float32 row); layer_norm of
# the float16 input stays float16; their sum is float32. The plan's subgraph
# handed layer_norm's formula the float32 gradient of the sum
# (native_layer_norm_backward: "expected scalar type Half but found Float"),
# where eager's engine casts it to float16. Fixed: an op that reads a value a
# float32 or promote cast raised reads every tensor through a boundary
# (csrc/jit_autocast/profiling/insert_autodiff_boundaries.h).
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


def prog(x0: Tensor) -> Tuple[Tensor, Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    v12 = x0
    v14 = F.layer_norm(v12, [4]); sink.append(v14)
    v15 = torch.quantile(v12, 0.5, dim=1, keepdim=True) + v14; sink.append(v15)
    return (x0, x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = True
OUTER = ('cpu', 'bfloat16', True)
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = False
EXECUTOR = 'profiling'


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(979141)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float16)
    return [x0]


def build():
    torch.manual_seed(979141)
    return prog


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
