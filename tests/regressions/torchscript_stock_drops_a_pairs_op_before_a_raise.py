# jitamp_fuzz program: seed 112807, index 43525 (torch 2.13), shrunk
# Reproduce: python tools/jitamp_fuzz --seed 112807 --index 43525
# Eager raises at `torch.polar` of a float16 and a float32 tensor (the
# second read from an object of a TorchScript class, `Pair`, made of an
# input). The standalone model saved and loaded (the stock executor) raises
# the AssertionError after it: freezing folded the raise's condition (a sum
# of the frozen weight), and the loaded code's raise leaves the op's result
# read only after it, so TorchScript drops the op (as
# torchscript_stock_drops_what_only_a_raise_follows.py). The runner's check
# that the op reads an argument follows the object's attributes:
# "known:dead-code".
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
        with torch.autocast('cpu', dtype=torch.float16):
            r = torch.mm(self.a, self.b)
        return r


class Sub1(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, a: Tensor, sink: List[Tensor]) -> Tensor:
        return a


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))
        self.sub = Sub1()

    def forward(self, x0: Tensor, flag: bool, dt: torch.dtype, bias: Optional[Tensor]) -> Tuple[Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        o2 = Pair(x0, x0)
        v3 = self.sub(self.w, sink); sink.append(v3)
        v5 = o2.scoped(); sink.append(v5)
        v4 = torch.polar(v5.abs(), o2.a).angle(); sink.append(v4)
        if bool(v3.sum() > 4.0):
            raise AssertionError('fuzz: v3 too large')
        return (x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = False
OUTER = None
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = False
EXECUTOR = 'simple'
ADD_AUTOCAST = None
THREADS = None


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(995513)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    dt = torch.float16
    bias = torch.randn(4, generator=g) if flag else None
    return [x0, flag, dt, bias]


def build():
    torch.manual_seed(995513)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
