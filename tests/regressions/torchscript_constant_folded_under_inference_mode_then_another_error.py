# jitamp_fuzz program: seed 271128, index 14989
# Reproduce: python tools/jitamp_fuzz --seed 271128 --index 14989
# Two threads: thread 0 under torch.inference_mode, thread 1 with grad in a
# bfloat16 region. Where thread 0's call makes the plan, TorchScript folds
# `torch.tensor([0, 1, 2, 3])` (nll_loss's target) into an inference tensor,
# which thread 1's nll_loss cannot save for backward; eager makes the tensor
# at each call, and raises a matmul's dtype error further on. Plain
# TorchScript folds the same (test_plan_made_in_inference_mode_is_torchscripts):
# known:inference-mode-plan, or ok where thread 1 makes the plan (a race).
from typing import Dict, List, Optional, Tuple

import torch
import jitamp  # noqa: F401
import torch.nn.functional as F
from torch import Tensor


class Sub1(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, a: Tensor, sink: List[Tensor]) -> Tensor:
        v2 = F.gelu(a); sink.append(v2)
        return a


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))
        self.sub = Sub1()

    def forward(self, x0: Tensor, x1: Tensor, x2: Tensor, flag: bool, n: int) -> Tuple[Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        ob: Optional[Tensor] = None
        if flag:
            ob = x2[1]
        with torch.amp.autocast('cpu', dtype=torch.bfloat16):
            for i6 in range(n):
                v3 = F.binary_cross_entropy_with_logits(x1, torch.sigmoid(x2), reduction='none'); sink.append(v3)
                v4 = torch.cdist(v3[:2], x0).repeat(2, 1); sink.append(v4)
                v5 = F.pad(x1.unsqueeze(0), [1, 1], mode='reflect').squeeze(0)[:, 1:5]; sink.append(v5)
            with torch.amp.autocast('cpu', dtype=torch.bfloat16):
                v7 = torch.cdist(self.w[:2], x1).repeat(2, 1); sink.append(v7)
                v8 = F.pad(v7.reshape(1, 1, 4, 4), [1, 1, 1, 1], mode='replicate').reshape(6, 6)[1:5, 1:5]; sink.append(v8)
            with torch.autocast('cpu', dtype=torch.bfloat16, cache_enabled=flag):
                if not flag:
                    with torch.amp.autocast('cpu', dtype=torch.bfloat16, enabled=n > 2, cache_enabled=flag):
                        v9 = torch.view_as_real(torch.complex(self.w.float(), x0.float()) @ torch.complex(x0.float(), self.w.float())).sum(-1); sink.append(v9)
                    v10 = torch.stack([self.w, v7, self.w])[1]; sink.append(v10)
                    v11 = torch.lstm(x2.unsqueeze(1), [x1[:1].unsqueeze(0), v10[:1].unsqueeze(0)], [x1.repeat(4, 1), v10.repeat(4, 1)], False, 1, 0.0, False, False, False)[0].squeeze(1); sink.append(v11)
                else:
                    v12 = F.margin_ranking_loss(self.w, self.w, v8, reduction='none'); sink.append(v12)
                v7 = v8 + self.w; sink.append(v7)
        v8 = torch.matmul(self.w.unsqueeze(0).expand(2, 4, 4), v7).sum(0); sink.append(v8)
        with torch.autocast('cuda'):
            v13 = F.nll_loss(self.w, torch.tensor([0, 1, 2, 3])) + x1; sink.append(v13)
        for i24 in range(2):
            with torch.amp.autocast('cpu', dtype=torch.bfloat16, enabled=n > 2) as ac14:
                k17 = 0
                while k17 < 2:
                    k17 += 1
                    v15 = v7.t(); sink.append(v15)
                    if n > 2:
                        break
                    with torch.autocast('cpu', dtype=torch.bfloat16):
                        v7 = torch.prod(v15[:2], 0) + v8; sink.append(v7)
                        v16 = torch.prod(v15, 1, keepdim=True) + v7; sink.append(v16)
            for i22 in range(2):
                v18 = F.gelu(v13); sink.append(v18)
                with torch.autocast(device_type='cpu', enabled=bool(v13.sum() > 0), cache_enabled=flag):
                    v19 = torch.pow(v13, 2); sink.append(v19)
                    v18 = F.pad(x0.reshape(1, 1, 4, 4), [1, 1, 1, 1], mode='replicate').reshape(6, 6)[1:5, 1:5]; sink.append(v18)
                    v20 = torch.cat([x2[:, :1], x1[:, 1:]], 1); sink.append(v20)
                    v21 = F.linear(x1, v8); sink.append(v21)
            v23 = torch.prod(x0) * v8; sink.append(v23)
        for i26 in range(n):
            v25 = torch.linalg.vector_norm(x1, dim=[1], keepdim=True) + x0; sink.append(v25)
        for i35 in range(2):
            for i29 in range(2):
                v27 = torch.zeros(4, 4, dtype=torch.get_autocast_cpu_dtype()) + x2; sink.append(v27)
                v28 = F.nll_loss(v7, torch.tensor([0, 1, 2, 3])) + v27; sink.append(v28)
            v30 = torch.relu(x0); sink.append(v30)
            with torch.autocast('cpu', dtype=torch.bfloat16):
                with torch.autocast('cpu', dtype=torch.bfloat16, enabled=False):
                    if bool(v30.sum() > 0):
                        v31 = v13 if torch.is_autocast_enabled() else x1; sink.append(v31)
                        v32 = torch.addcmul(v30, v31[:, :1], v31[:1], value=0.5); sink.append(v32)
                        v33 = torch.fft.rfft(v32).abs().sum(1, keepdim=True) + v8; sink.append(v33)
                    v34 = self.sub(x2, sink); sink.append(v34)
        return (v8, sink)


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
    g = torch.Generator().manual_seed(456115)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    x1 = torch.randn(4, 4, generator=g).to(torch.float32)
    x2 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    n = 3 if flag else 1
    return [x0, x1, x2, flag, n]


def build():
    torch.manual_seed(456115)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
