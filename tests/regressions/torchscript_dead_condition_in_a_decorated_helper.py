# jitamp_fuzz program: seed 112804, index 4835 (torch 2.13), shrunk by hand
# Reproduce: python tools/jitamp_fuzz --seed 112804 --index 4835
# A helper's `if bool(b.sum() > 0): pass` (its break dropped by the
# generator) compares a complex tensor: eager raises '"gt_cpu" not
# implemented for 'ComplexFloat''; TorchScript's front end emits nothing for
# the empty if, so the scripted program goes on and raises later, in
# group_norm (mismatch:error). TorchScript's own (plain TorchScript too:
# test_fuzz_regressions.py, test_dead_empty_if_is_torchscripts); the helper
# is `@torch.autocast`-decorated, which plain TorchScript cannot script, so
# the runner reads liveness off the scope-free twin: "known:dead-code".
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


@torch.autocast('cpu', dtype=torch.float16)
def h1(a: Tensor, b: Tensor, sink: List[Tensor]) -> Tensor:
    if bool(b.sum() > 0):
        pass
    v2 = a * b; sink.append(v2)
    return b


def prog(x0: Tensor, flag: bool) -> Tuple[Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    v10 = h1(x0, x0, sink); sink.append(v10)
    v16 = F.group_norm(v10.unsqueeze(0), 2).squeeze(0); sink.append(v16)
    return (v16, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = True
OUTER = ('cpu', 'float16', True)
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = True
EXECUTOR = 'simple'
ADD_AUTOCAST = None
THREADS = None


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(542794)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g, dtype=torch.complex64)
    return [x0, flag]


def build():
    torch.manual_seed(542794)
    return prog


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
