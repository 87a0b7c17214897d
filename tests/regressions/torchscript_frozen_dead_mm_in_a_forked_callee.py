# jitamp_fuzz program: seed 2701, index 215 (torch 2.13)
# Reproduce: python tools/jitamp_fuzz --seed 2701 --index 215
# Frozen comparison. Eager raises in the scripted helper h1, called forked
# and directly: a dead mm in a loop (`v6 = v2 @ a`) meets a long tensor and
# a float16 cast. torch.jit.freeze inlines h1 and drops the dead mm (plain
# TorchScript's freeze too), so the frozen model raises later, another
# class of error (NotImplementedError of layer_norm on a long tensor). The
# runner's dead-code rule now takes an error of another class, and inlines
# the program scripted without jitamp with the built-in JIT autocast off
# (h1's scope has a non-constant `enabled`, which that pass refuses).
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


@torch.jit.script
def h1(a: Tensor, b: Tensor) -> Tensor:
    with torch.autocast('cuda', dtype=torch.bfloat16, enabled=bool(a.sum() > 0)):
        v2 = torch.stack([b, b, b])[1]
        b = F.adaptive_avg_pool3d(b.reshape(1, 1, 1, 4, 4), [1, 4, 4]).reshape(4, 4)
        with torch.autocast('cpu', dtype=torch.float16):
            if bool(a.sum() > 0):
                v3 = a.to(torch.bfloat16)
                v4 = b.t()
                v5 = torch.quantile(v3, 0.5, dim=1, keepdim=True) + v2
            for i9 in range(2):
                v6 = v2 @ a
                v7 = F.binary_cross_entropy(torch.sigmoid(a), torch.sigmoid(v2), reduction='none')
                v8 = F.smooth_l1_loss(v6, v6, reduction='none')
            v10 = torch.where(v2 > 0, v2, a)
            v11 = v10 * v10
        with torch.autocast('cpu', dtype=torch.float32):
            v12 = v10.sum(-1, keepdim=True) + a
            v11 = v2.clamp(-1.0, 1.0)
            v10.copy_(v2)
            v2 = torch.softmax(b, -1, dtype=torch.float32)
    with torch.autocast('cpu', dtype=torch.float32) as ac13:
        v11 = F.pad(v12.reshape(1, 1, 4, 4), [1, 1, 1, 1], mode='replicate').reshape(6, 6)[1:5, 1:5]
    with torch.cuda.amp.autocast(dtype=torch.float16) as ac14:
        v12 = F.layer_norm(v12, [4])
        v15 = torch.mv(v12, v10[0]).unsqueeze(1) + v12
    with ac13:
        with torch.autocast('cpu', dtype=torch.float16, enabled=bool(v12.sum() > 0)) as ac16:
            torch.addmm(v15, v15, b, out=v15)
            v17 = v12.float()
        v18 = torch.linalg.vecdot(v12, v10).unsqueeze(1) + a
    return v11


def h19(a: Tensor, b: Tensor, sink: List[Tensor]) -> Tensor:
    v20 = F.linear(b, b, a[0]); sink.append(v20)
    with torch.autocast('cpu', dtype=torch.float32, enabled=False):
        v21 = h1(v20, b); sink.append(v21)
        v22 = F.conv1d(v21.unsqueeze(0), v21.unsqueeze(2), None).squeeze(0); sink.append(v22)
        fut24 = torch.jit.fork(h1, v20, a); v23 = torch.jit.wait(fut24); sink.append(v23)
    return v20


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, x0: Tensor, flag: bool, dt: torch.dtype, bias: Optional[Tensor]) -> Tuple[Tensor, Tensor, Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        ob: Optional[Tensor] = None
        if flag:
            ob = x0[1]
        v25 = torch.mm(x0, x0); sink.append(v25)
        k28 = 0
        while k28 < 2:
            k28 += 1
            fut27 = torch.jit.fork(h1, self.w, v25); v26 = torch.jit.wait(fut27); sink.append(v26)
        ac29 = torch.amp.autocast('cpu', dtype=dt, enabled=bool(x0.sum() > 0))
        with ac29:
            v30 = torch.mm(x0, v25); sink.append(v30)
            v31 = h1(x0, v25); sink.append(v31)
        with ac29:
            for i46 in range(2):
                ac32 = torch.autocast('cpu', dtype=torch.float16, enabled=flag) if flag else torch.autocast('cpu', dtype=torch.float32)
                with ac32:
                    with torch.autocast('cuda', dtype=torch.float16, enabled=not flag):
                        v33 = v31.to(self.w.dtype); sink.append(v33)
                        v34 = torch.baddbmm(v25.unsqueeze(0), x0.unsqueeze(0), v30.unsqueeze(0)).squeeze(0); sink.append(v34)
                        v33 = torch.log(v33.abs() + 1.0); sink.append(v33)
                        v35 = self.w.index_copy(0, torch.tensor([1, 3]), v34[:2]); sink.append(v35)
                    v36 = h19(v34, x0, sink); sink.append(v36)
                    with torch.amp.autocast('cpu', dtype=torch.float16, enabled=bool(x0.sum() > 0), cache_enabled=True):
                        v25 = torch.prod(v35) * v35; sink.append(v25)
                        v36 = F.binary_cross_entropy(torch.sigmoid(v30), torch.sigmoid(self.w), reduction='none'); sink.append(v36)
                    v37 = torch.bmm(v31.unsqueeze(0), v25.unsqueeze(0)).squeeze(0); sink.append(v37)
                with torch.amp.autocast('cpu', dtype=dt, enabled=False, cache_enabled=False):
                    v38 = torch.bmm(x0.unsqueeze(0), v31.unsqueeze(0)).squeeze(0); sink.append(v38)
                    v25 = torch.mv(v35, v31[0]).unsqueeze(1) + v38; sink.append(v25)
                    with torch.amp.autocast('cpu', dtype=torch.float16, enabled=not flag, cache_enabled=flag):
                        v39 = torch.baddbmm(v34.unsqueeze(0), v37.unsqueeze(0), x0.unsqueeze(0)).squeeze(0); sink.append(v39)
                    with torch.autocast('cpu', dtype=torch.float16):
                        v40 = torch.log(x0.abs() + 1.0); sink.append(v40)
                        v41 = v36.to(torch.bfloat16); sink.append(v41)
                        v36 = torch.mv(v36, v25[0]).unsqueeze(1) + v35; sink.append(v36)
                with torch.autocast('cpu', dtype=dt):
                    v42 = v41 * v38; sink.append(v42)
                    with torch.autocast(device_type='cpu', dtype=torch.float16) as ac43:
                        v38 = F.kl_div(v31, x0, reduction='none'); sink.append(v38)
                        v38 = torch.addbmm(v34, v42.unsqueeze(0), v30.unsqueeze(0)); sink.append(v38)
                    v44 = F.scaled_dot_product_attention(v34.unsqueeze(0), v31.unsqueeze(0), self.w.unsqueeze(0)).squeeze(0); sink.append(v44)
                    with torch.autocast('cpu', dtype=torch.float16, cache_enabled=True) as ac45:
                        v44 = torch.einsum('ij,jk->ik', v31, x0); sink.append(v44)
            with torch.autocast('cpu', dtype=torch.float16):
                v47 = torch.prod(self.w) * x0; sink.append(v47)
                v48 = h1(v31, v47); sink.append(v48)
                with torch.autocast('cpu', dtype=torch.float16) as ac49:
                    v30 = torch.addcmul(v48, v25, x0, value=0.5); sink.append(v30)
                    v31 = torch.addbmm(v30, self.w.unsqueeze(0), v47.unsqueeze(0)); sink.append(v31)
                    v50 = F.nll_loss(v47, torch.tensor([0, 1, 2, 3])) + self.w; sink.append(v50)
                v47 = v25 @ v25; sink.append(v47)
            v47 = F.mse_loss(v25, v47, reduction='none'); sink.append(v47)
        return (v25, v31, v50, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = True
OUTER = None
SAVE = False
RUNTIME_JITAMP = True
ALTERNATE = True
EXECUTOR = 'simple'


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(772184)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randint(-3, 4, (4, 4), generator=g)
    flag = flag
    dt = torch.float16
    bias = torch.randn(4, generator=g) if flag else None
    return [x0, flag, dt, bias]


def build():
    torch.manual_seed(772184)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
