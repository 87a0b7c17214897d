# jitamp_fuzz program: seed 271127, index 21686
# Reproduce: python tools/jitamp_fuzz --seed 271127 --index 21686 (shrunk by hand)
# Profiling executor, with grad, under a bfloat16 region: in a bfloat16 scope,
# softmax of a float16 input (no CPU policy: float16 stays), then softmax of
# that with dtype=float32. The plan differentiates softmax.int as one op; its
# formula passes the float16 input's dtype to _softmax_backward_data with a
# float32 gradient: "expected scalar type Float but found Half" from the
# second call, where eager (which casts first, then differentiates the
# float32 softmax) returns. The region casts the mm after the scope, so plain
# TorchScript is no reference for values. Plain TorchScript raises the same for that op
# alone on the dtypes eager gives it (runner._formula_raises_on_eagers_inputs):
# known:profiling-plain-torchscript.
from typing import Dict, List, Optional, Tuple

import torch
import jitamp  # noqa: F401
import torch.nn.functional as F
from torch import Tensor


def prog(x0: Tensor, flag: bool) -> Tuple[Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    with torch.autocast('cpu', dtype=torch.bfloat16):
        v6 = torch.softmax(x0, -1); sink.append(v6)
        v7 = torch.softmax(v6, -1, dtype=torch.float32); sink.append(v7)
    v8 = torch.mm(x0, x0); sink.append(v8)
    return (x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = True
OUTER = ('cpu', 'bfloat16', True)
SAVE = False
RUNTIME_JITAMP = True
ALTERNATE = False
EXECUTOR = 'profiling'
ADD_AUTOCAST = None
THREADS = None


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(942195)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float16)
    flag = flag
    return [x0, flag]


def build():
    torch.manual_seed(942195)
    return prog


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
