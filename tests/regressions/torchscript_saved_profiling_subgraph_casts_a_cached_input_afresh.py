# jitamp_fuzz program: seed 281209, index 28557 (torch 2.13): compared again after torch.jit.save and load, on the profiling executor with gradients; at call 2 eager's cast cache hands matmul the float16 cast of a leaf input made under float16, beside a bfloat16 cast (addmv: input tensors must have the same dtype), while the loaded program's differentiable subgraph, whose inputs are detached, casts it afresh and raises mm's out= error further on; the same program on the simple executor gives eager's: known:profiling-detached-cache (runner, the saved branch through _profiling_plans_own)
# Reproduce: python tools/jitamp_fuzz --seed 281209 --index 28557
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
        with torch.autocast('cpu', dtype=torch.bfloat16):
            r = torch.mm(self.a, self.b)
        return r


@torch.jit.script
def h1(a: Tensor, b: Tensor) -> Tensor:
    if bool(a.sum() > 4.0):
        raise RuntimeError('fuzz: a too large')
    v2 = torch.matmul(b, a[0]).unsqueeze(1) * b
    if bool(a.sum() > 0):
        a = torch.where(v2 > 0, v2, v2)
        v3 = torch.einsum('ij,jk->ik', v2, b)
    for i5 in range(2):
        v4 = torch.pow(a, 2)
        assert bool(b.abs().max() < 8.0), 'fuzz: b out of range'
    return v2


def h6(a: Tensor, b: Tensor, sink: List[Tensor]) -> Tensor:
    o7 = Pair(a, a)
    v8 = h1(b, o7.b); sink.append(v8)
    if bool(b.sum() > 0):
        fut10 = torch.jit.fork(h1, v8, v8); v9 = torch.jit.wait(fut10); sink.append(v9)
        v11 = torch.exp(v8); sink.append(v11)
    v12 = o7.scoped(); sink.append(v12)
    return v8


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, x0: Tensor, x1: Tensor, flag: bool) -> Tuple[Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        with torch.autocast('cpu', dtype=torch.float16):
            v13 = h1(self.w, x1); sink.append(v13)
            with torch.autocast(device_type='cpu', dtype=torch.float16 if flag else torch.bfloat16) as ac14:
                v15 = torch.mm(v13[:2], v13).repeat(2, 1); sink.append(v15)
                fut17 = torch.jit.fork(h1, x1, x1); v16 = torch.jit.wait(fut17); sink.append(v16)
                v18 = F.linear(x0, v13); sink.append(v18)
            ac19 = torch.autocast('cpu', dtype=torch.bfloat16)
            with ac19:
                v15 = torch.baddbmm(self.w.unsqueeze(0), v13.unsqueeze(0), x0.unsqueeze(0)).squeeze(0); sink.append(v15)
                torch.mm(x0, x0, out=v18)
                for i22 in range(2):
                    with torch.autocast('cuda', cache_enabled=flag):
                        v16 = F.hinge_embedding_loss(x0, torch.sign(v18), reduction='none'); sink.append(v16)
                        v20 = torch.pow(v13, 2); sink.append(v20)
                        v21 = torch.bmm(v13.unsqueeze(0), v15.unsqueeze(0)).squeeze(0); sink.append(v21)
                v23 = torch.fft.fft(v18).abs(); sink.append(v23)
            v15 = F.cross_entropy(v23, torch.softmax(v13, 1)) + x0; sink.append(v15)
        v24 = torch.linalg.eigh(v18 + v18.t())[1]; sink.append(v24)
        with torch.autocast('cpu', dtype=torch.float16 if flag else torch.bfloat16):
            v25 = v24.index_copy(0, torch.tensor([1, 3]), v18[:2]); sink.append(v25)
            v26 = x1 if torch.is_autocast_enabled('cpu') else v18; sink.append(v26)
            v27 = torch.where(v24 > 0, v26[:1], v18[:, 1:2]); sink.append(v27)
        with torch.autocast('cpu', dtype=torch.float16 if flag else torch.bfloat16, enabled=not flag) as ac28:
            v29 = torch.linalg.eig(x1.nan_to_num(0.0, 0.0, 0.0))[0].real.unsqueeze(0) * x1; sink.append(v29)
            v30 = v29.to(torch.get_autocast_dtype('cpu')); sink.append(v30)
            v31 = h1(self.w, v13); sink.append(v31)
        v32 = torch.fft.fft2(v31).abs(); sink.append(v32)
        for i34 in range(2):
            v33 = torch.mm(v24.to(torch.complex64), v32.to(torch.complex64)).abs() + v24; sink.append(v33)
        return (v30, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = True
OUTER = ('cpu', 'bfloat16', False)
SAVE = True
RUNTIME_JITAMP = False
ALTERNATE = True
EXECUTOR = 'profiling'
ADD_AUTOCAST = None
THREADS = None


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(537191)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    x1 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    return [x0, x1, flag]


def build():
    torch.manual_seed(537191)
    return Prog()

