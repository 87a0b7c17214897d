# jitamp_fuzz program: seed 112807, index 89424
# Reproduce: python tools/jitamp_fuzz --seed 112807 --index 89424
# Eager raises a complex comparison's NotImplementedError; the scripted
# program raises a later RuntimeError, as the program's scope-free twin on
# plain TorchScript does, while eager with its scopes doing nothing raises
# eager's error there too: TorchScript's, "known:plain-torchscript".
from typing import Dict, List, Optional, Tuple

import torch
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


def h1(a: Tensor, b: Tensor, sink: List[Tensor]) -> Tensor:
    v2 = torch.cdist(a, a); sink.append(v2)
    v3 = torch.prod(v2[:2], 0) + v2; sink.append(v3)
    return b


def h4(a: Tensor, b: Tensor, sink: List[Tensor]) -> Tensor:
    if bool(b.sum() > 0):
        tu5 = (a, b)
    return b


def prog(x0: Tensor, x1: Tensor) -> Tuple[Tensor, Tensor, Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    ob: Optional[Tensor] = None
    if True:
        ob = x1[1]
    for i7 in range(2):
        o6 = Pair(x1, x1)
    v8 = torch.linalg.svd(x1)[0] * x0; sink.append(v8)
    ac9 = torch.autocast('cpu')
    with ac9:
        v10 = torch.linalg.eigvals(v8.nan_to_num(0.0, 0.0, 0.0)).abs().unsqueeze(1) + x0; sink.append(v10)
        with torch.autocast(device_type='cpu'):
            with torch.cpu.amp.autocast(dtype=torch.bfloat16):
                v8 = torch.pinverse(v8); sink.append(v8)
                for i13 in range(2):
                    v11 = x0.to(torch.bfloat16); sink.append(v11)
                    v12 = torch.where(v11 > 0, v10[:1], x1[:, 1:2]); sink.append(v12)
                if bool(x0.sum() > 0):
                    v14 = torch.tanh(v8); sink.append(v14)
                v15 = h4(x0, x1, sink); sink.append(v15)
            v10 = torch.addmm(v15, x0, x1, beta=0.5, alpha=2.0); sink.append(v10)
    for i19 in range(2):
        with torch.autocast('cuda', dtype=torch.float16, enabled=True):
            with torch.autocast('cpu', enabled=False):
                v10 = torch.bmm(v15.unsqueeze(0), x1.unsqueeze(0)).squeeze(0); sink.append(v10)
                v15 = torch.cat([v15[:, :1], x0[:, 1:]], 1); sink.append(v15)
            v16 = v10.to(torch.get_autocast_gpu_dtype()); sink.append(v16)
            v17 = F.layer_norm(v8[:, :2], [2]).repeat(1, 2); sink.append(v17)
        v8 = torch.linalg.eig(x1.nan_to_num(0.0, 0.0, 0.0))[0].real.unsqueeze(0) * x1; sink.append(v8)
        if bool(v15.sum() > 0):
            v17 = torch.topk(v10, int(v8.abs().argmin()) % 4 + 1, 1)[0].sum(1, keepdim=True) + v8; sink.append(v17)
            v18 = torch.addbmm(v15, v16.unsqueeze(0), v10.unsqueeze(0)); sink.append(v18)
    return (x1, v8, v15, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = False
OUTER = None
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = True
EXECUTOR = 'simple'
ADD_AUTOCAST = None
THREADS = None


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(720761)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.bfloat16)
    x1 = torch.randn(4, 4, generator=g, dtype=torch.complex64)
    return [x0, x1]


def build():
    torch.manual_seed(720761)
    return prog


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
