# jitamp_fuzz program: seed 112807, index 61471
# Reproduce: python tools/jitamp_fuzz --seed 112807 --index 61471
# Eager raises '"gt_cpu" not implemented for 'ComplexFloat'' at
# `if bool(x0.sum() > 0): o12 = Pair(x2, x0)` (a complex input; the object
# is never read); the scripted program goes on and raises a later error
# (linalg.eig of a float16 tensor), and so does the program's scope-free
# twin on plain TorchScript, while eager with its scopes doing nothing
# raises eager's error there too: TorchScript's, "known:plain-torchscript"
# (runner._plain_words_it_so).
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
    for i6 in range(2):
        v2 = torch.polar(a.abs(), b).angle()
        v3 = torch.linalg.qr(v2)[0]
        with torch.amp.autocast('cpu', dtype=torch.float32) as ac4:
            assert bool(a.abs().max() < 8.0), 'fuzz: a out of range'
            v5 = F.cross_entropy(b, torch.softmax(a, 1)) + a
    v7 = torch.softmax(b, -1)
    ac8 = torch.autocast('cpu', dtype=torch.float32, enabled=bool(v7.sum() > 0), cache_enabled=False)
    with ac8:
        d9: Dict[str, Tensor] = {"p": b, "q": v7}
    v10 = torch.prod(v7, 1, keepdim=True) + d9["p"]
    return d9["q"]


@torch.jit.ignore
def ign11(a: Tensor, b: Tensor) -> Tensor:
    r = a.float()
    return r


def prog(x0: Tensor, x1: Tensor, x2: Tensor, flag: bool, dev: str) -> Tuple[Tensor, Tensor, Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    with torch.amp.autocast('cpu', dtype=torch.bfloat16, cache_enabled=flag):
        if bool(x0.sum() > 0):
            o12 = Pair(x2, x0)
        v13 = ign11(x2, x0); sink.append(v13)
        v14 = torch.pinverse(v13); sink.append(v14)
        with torch.cpu.amp.autocast(dtype=torch.bfloat16, enabled=False, cache_enabled=True):
            v15 = torch.linalg.eig(x2.nan_to_num(0.0, 0.0, 0.0))[0].real.unsqueeze(0) * x2; sink.append(v15)
    v16 = F.poisson_nll_loss(x1, v14.abs(), reduction='none'); sink.append(v16)
    v17 = torch.linalg.eigvals(v16.nan_to_num(0.0, 0.0, 0.0)).abs().unsqueeze(1) + x1; sink.append(v17)
    v18 = v14.clone(); sink.append(v18)
    with torch.autocast('cpu', dtype=torch.float16 if flag else torch.bfloat16) as ac19:
        v20 = torch.cholesky_solve(v13, v18.tril(-1) * 0.1 + torch.eye(4, dtype=v18.dtype) * 2.0); sink.append(v20)
    v21 = torch.lstm_cell(v15, [v17, v14], v14.repeat(4, 1), v15.repeat(4, 1))[1]; sink.append(v21)
    with torch.autocast('cpu', enabled=bool(v18.sum() > 0), cache_enabled=True) as ac22:
        if flag:
            v23 = h1(v17, x2); sink.append(v23)
            with torch.autocast(device_type='cpu', dtype=torch.float16 if flag else torch.bfloat16, enabled=False):
                for i25 in range(2):
                    v20 = F.l1_loss(v23, x0) + v16; sink.append(v20)
                    v24 = F.layer_norm(x0, [4]); sink.append(v24)
                if flag:
                    v26 = torch.prod(v17, 1, keepdim=True) + x2; sink.append(v26)
                else:
                    v27 = torch.linalg.svdvals(v18).unsqueeze(1) + v23; sink.append(v27)
                    v28 = F.conv1d(v15.unsqueeze(0), x1.unsqueeze(2)).squeeze(0); sink.append(v28)
                torch.cat([v17[:2], v16[:2]], 0, out=v17)
        else:
            ac29 = torch.autocast('cpu', dtype=torch.float16 if flag else torch.bfloat16, enabled=not flag)
            with ac29:
                for i31 in range(2):
                    v30 = v18 * float(torch.is_autocast_cpu_enabled()); sink.append(v30)
                    v21 = torch.roll(x1, int(v14.argmax()) % 4, 1); sink.append(v21)
        v32 = torch.cat([x0, x0], 1)[:, 2:6]; sink.append(v32)
        with torch.autocast('cpu', dtype=torch.float16 if flag else torch.bfloat16, enabled=bool(v15.sum() > 0), cache_enabled=flag) as ac33:
            v34 = torch.rnn_relu_cell(x0, v21, x2, x2, v21[0], x0[1]); sink.append(v34)
            v35 = torch.linalg.svdvals(v16).unsqueeze(1) + x2; sink.append(v35)
            v18 = torch.mm(v14[:2], v20).repeat(2, 1); sink.append(v18)
            v36 = h1(v21, v32); sink.append(v36)
        ac37 = torch.amp.autocast('cpu', dtype=torch.float16 if flag else torch.bfloat16, enabled=bool(v17.sum() > 0), cache_enabled=False)
        with ac37:
            v38 = torch.pow(x2, 2); sink.append(v38)
            with torch.autocast('cpu', dtype=torch.float16, enabled=bool(v32.sum() > 0)) as ac39:
                if not flag:
                    v40 = torch.cumsum(v21, 1 if bool(v34.sum() > 0) else 0); sink.append(v40)
                    v41 = F.grid_sample(v34.reshape(1, 1, 4, 4), torch.tanh(v17).reshape(1, 4, 2, 2), align_corners=False).reshape(4, 2).repeat(1, 2); sink.append(v41)
                    v42 = torch.zeros(4, 4, dtype=torch.get_autocast_cpu_dtype()) + v35; sink.append(v42)
                else:
                    v34 = F.poisson_nll_loss(v14, v35.abs(), reduction='none'); sink.append(v34)
                if not flag:
                    v43 = torch.softmax(x0, -1, dtype=torch.float32); sink.append(v43)
                    v35 = F.pad(v36.reshape(1, 1, 4, 4), [1, 1, 1, 1], mode='replicate').reshape(6, 6)[1:5, 1:5]; sink.append(v35)
                    v44 = torch.prod(v21[:2], 0) + x2; sink.append(v44)
                v45 = F.smooth_l1_loss(x1, v14, reduction='none'); sink.append(v45)
                if flag:
                    v46 = torch.cat([v18, x1], 1)[:, 2:6]; sink.append(v46)
            torch.addmm(v15, v45, v13, out=v14)
    return (v36, v38, x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = True
OUTER = None
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = True
EXECUTOR = 'simple'
ADD_AUTOCAST = None
THREADS = None


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(943131)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g, dtype=torch.complex64)
    x1 = torch.randn(4, 4, generator=g).to(torch.float16)
    x2 = torch.randn(4, 4, generator=g).to(torch.float16)
    flag = flag
    dev = 'cpu'
    return [x0, x1, x2, flag, dev]


def build():
    torch.manual_seed(943131)
    return prog


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
