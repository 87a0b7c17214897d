# jitamp_fuzz program: seed 77112026, index 8814
# Reproduce: python tools/jitamp_fuzz --seed 77112026 --index 8814
# Profiling executor, with gradients: once the plan is optimized, the out=
# softmax into bmm's result raises autograd's "functions with out=...
# arguments don't support automatic differentiation" where eager's kernel
# runs on (and raises a NameError later, in an @torch.jit.ignore function).
# Plain TorchScript raises the same at the same call, with its scopes doing
# nothing and without them (tests/test_fuzz_regressions.py): TorchScript's
# own, known:profiling-plain-torchscript (runner._plain_raises_the_same).
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


@torch.jit.ignore
def ign3(a: Tensor, b: Tensor) -> Tensor:
    return r


def prog(x0: Tensor, flag: bool, dt: torch.dtype, dev: str, bias: Optional[Tensor]) -> Tuple[Tensor, Tensor, Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    with torch.amp.autocast('cpu', dtype=torch.float16, enabled=not flag):
        v4 = x0
        v5 = F.prelu(v4, v4[0]); sink.append(v5)
    v8 = x0
    v9 = torch.bmm(v5.unsqueeze(0), v8.unsqueeze(0)).squeeze(0); sink.append(v9)
    if flag:
        return (v9, v8, v8, sink)
    torch.softmax(v5, 1, out=v9)
    v24 = x0
    v25 = ign3(v24, v24); sink.append(v25)
    return (x0, x0, x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = True
OUTER = None
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = True
EXECUTOR = 'profiling'


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(514004)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float64)
    flag = flag
    dt = torch.float16
    dev = 'cpu'
    bias = torch.randn(4, generator=g) if flag else None
    return [x0, flag, dt, dev, bias]


def build():
    torch.manual_seed(514004)
    return prog


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
