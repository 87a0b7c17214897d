# jitamp_fuzz program: seed 112903, index 81968 (torch 2.13): two threads call the model, the first under torch.inference_mode (OUTER), whose first call made the plan: constant propagation folded `torch.tensor([0, 1, 2, 3])` into an inference tensor, which the second thread (grad on, bfloat16 region) cannot save for multi_margin_loss's backward; eager makes it at each call: known:inference-mode-plan (plain TorchScript too, tests/test_fuzz_regressions.py)
# Reproduce: python tools/jitamp_fuzz --seed 112903 --index 81968
from typing import Dict, List, Optional, Tuple

import torch
import jitamp  # noqa: F401
import torch.nn.functional as F
from torch import Tensor


class Pair:
    def __init__(self, a: Tensor, b: Tensor):
        self.a = a
        self.b = b

    def prod(self) -> Tensor:
        return torch.mm(self.a, self.b)

    def scoped(self) -> Tensor:
        with torch.autocast('cpu', dtype=torch.bfloat16):
            r = torch.mm(self.a, self.b)
        return r


@torch.jit.script
def h1(a: Tensor, b: Tensor) -> Tensor:
    with torch.amp.autocast('cpu', dtype=torch.float32, enabled=True):
        if bool(a.sum() > 0):
            a = torch.pinverse(b)
            if bool(b.sum() > 4.0):
                raise ValueError('fuzz: b too large')
            if bool(a.sum() > 4.0):
                raise ValueError('fuzz: a too large')
    v2 = F.kl_div(b, a, reduction='none')
    return a


def h3(a: Tensor, b: Tensor, sink: List[Tensor]) -> Tensor:
    v4 = F.binary_cross_entropy_with_logits(a, torch.sigmoid(a), reduction='none'); sink.append(v4)
    v5 = torch.stack([v4, a, a])[1]; sink.append(v5)
    fut7 = torch.jit.fork(h1, v5, v5); v6 = torch.jit.wait(fut7); sink.append(v6)
    v8 = torch.linalg.vecdot(v5, a).unsqueeze(1) + v5; sink.append(v8)
    return b


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, x0: Tensor, x1: Tensor, x2: Tensor) -> Tuple[Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        v9 = F.kl_div(self.w, x2, reduction='none'); sink.append(v9)
        if bool(self.w.sum() > 0):
            v10 = h3(x2, x0, sink); sink.append(v10)
        if bool(x1.sum() > 0):
            return (x2, sink)
        v11 = F.multi_margin_loss(self.w, torch.tensor([0, 1, 2, 3]), reduction='none').unsqueeze(1) + x2; sink.append(v11)
        o12 = Pair(self.w, v9)
        v13 = torch.stack([v9, v11, v11])[1]; sink.append(v13)
        return (o12.a, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = True
OUTER = 'inference_mode'
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = True
EXECUTOR = 'profiling'
ADD_AUTOCAST = None
THREADS = (('cpu', 'bfloat16', True),)


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(257527)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    x1 = torch.randn(4, 4, generator=g).to(torch.float32)
    x2 = torch.randn(4, 4, generator=g).to(torch.float32)
    return [x0, x1, x2]


def build():
    torch.manual_seed(257527)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
