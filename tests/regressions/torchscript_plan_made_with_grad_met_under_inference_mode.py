# jitamp_fuzz program: seed 112903, index 49203 (torch 2.13): two threads call the model, the first under torch.inference_mode (OUTER); the profiling plan, optimized during the second thread's call (grad on, float16 region), holds differentiable graphs, whose op saves its inputs for backward whatever the grad mode, so the first thread's call raises at an inference tensor input (empty TorchScript traceback) where eager raises a dtype error at self.lin; a race (about 1 run in 4): known:inference-mode-plan (plain TorchScript too, tests/test_fuzz_regressions.py)
# Reproduce: python tools/jitamp_fuzz --seed 112903 --index 49203
from typing import Dict, List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


class Sub1(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, a: Tensor, sink: List[Tensor]) -> Tensor:
        return self.w


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))
        self.sub = Sub1()

    def forward(self, x0: Tensor, x1: Tensor, flag: bool, n: int, bias: Optional[Tensor]) -> Tuple[Tensor, Tensor, Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        ob: Optional[Tensor] = None
        if flag:
            ob = x1[1]
        for i5 in range(2):
            with torch.autocast('cpu', dtype=torch.float32, cache_enabled=False) as ac2:
                k4 = 0
                while k4 < 2:
                    k4 += 1
                    v3 = torch.prod(self.w, 1, keepdim=True) + self.w; sink.append(v3)
                    v3 = torch.exp(x0); sink.append(v3)
        with torch.autocast('cpu', dtype=torch.float16, cache_enabled=flag):
            if n > 2:
                if not flag:
                    return (x0, self.w, x1, sink)
                v6 = torch.where(self.w > 0, self.w, x0); sink.append(v6)
            else:
                d7: Dict[str, Tensor] = {"p": self.w, "q": x0}
        v8 = self.lin(x0); sink.append(v8)
        v9 = F.layer_norm(x1, [4]); sink.append(v9)
        v8 = v9.float(); sink.append(v8)
        v10 = x0 + v9; sink.append(v10)
        return (v10, v10, self.w, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = False
OUTER = 'inference_mode'
SAVE = False
RUNTIME_JITAMP = True
ALTERNATE = True
EXECUTOR = 'profiling'
ADD_AUTOCAST = None
THREADS = (('cpu', 'float16', True),)


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(886021)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float16)
    x1 = torch.randn(4, 4, generator=g).to(torch.float16)
    flag = flag
    n = 3 if flag else 1
    bias = torch.randn(4, generator=g) if flag else None
    return [x0, x1, flag, n, bias]


def build():
    torch.manual_seed(886021)
    return Prog()
