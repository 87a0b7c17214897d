# jitamp_fuzz program: seed 2159, index 3287 (torch 2.15; 2.13 too)
# Reproduce: python tools/jitamp_fuzz --seed 2159 --index 3287
# No autocast anywhere. The @torch.jit.script callee h1 writes cat's result
# into v2 (out=v2), which it also reads, and nothing reads v2 afterwards:
# TorchScript's dead code elimination deletes that write from h1's own plan,
# which eager calls, so eager returns. Inlined in the loop of prog's plan the
# write stays (a loop body's writes are kept) and raises what Python would
# ("some elements of the input tensor and the written-to tensor refer to a
# single memory location"). TorchScript's: known:dead-code. (The loop's trip
# count was the constant 2; since jitamp's plan unrolls loops, a constant
# one goes whole and the dead code elimination after it deletes the write
# there too, which compares ok: the count is now read from an argument, and
# the plan's loop for the rest keeps the write.)
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


@torch.jit.script
def h1(a: Tensor, b: Tensor) -> Tensor:
    v2 = F.conv1d(b.unsqueeze(0), a.unsqueeze(2), b[0]).squeeze(0)
    if bool(v2.sum() > 0):
        v3 = F.pad(v2.reshape(1, 1, 4, 4), [1, 1, 1, 1], mode='replicate').reshape(6, 6)[1:5, 1:5]
        torch.cat([b[:2], v2[:2]], 0, out=v2)
    else:
        pass
    return a


def prog(x0: Tensor, flag: bool) -> Tuple[Tensor, Tensor, Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    v8 = x0
    v10 = x0
    for i13 in range(int(flag) + 1):
        v12 = h1(v10, v8); sink.append(v12)
    return (x0, x0, x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = False
OUTER = None
SAVE = False
RUNTIME_JITAMP = True
ALTERNATE = False
EXECUTOR = 'simple'


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(795235)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    return [x0, flag]


def build():
    torch.manual_seed(795235)
    return prog


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
