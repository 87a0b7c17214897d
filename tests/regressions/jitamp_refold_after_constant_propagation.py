# jitamp_fuzz program: seed 99, index 4850
# Reproduce: python tools/jitamp_fuzz --seed 99 --index 4850
# Fuzz finding 13: FoldStaticCasts folds casts again after the ops it settles at
# freezing, and reused the constants of the first round, which constant
# propagation may have removed: a use after free (freezing crashed). Fixed:
# each round makes its own. tests/test_fuzz_regressions.py runs it as a script,
# in a process of its own.
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


class Prog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, x0: Tensor, flag: bool, dev: str) -> Tuple[Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        if not flag:
            return (self.w, sink)
        with torch.autocast('cpu', dtype=torch.float16, enabled=bool(self.w.sum() > 0)):
            with torch.autocast(device_type='cpu', dtype=torch.float16):
                v1 = F.adaptive_avg_pool3d(x0.reshape(1, 1, 1, 4, 4), [1, 4, 4]).reshape(4, 4); sink.append(v1)
            v1 = F.linear(self.w, self.w, x0[0]); sink.append(v1)
            with torch.autocast('cpu', dtype=torch.float16):
                v2 = self.lin(self.w); sink.append(v2)
                v3 = F.huber_loss(v1, self.w, reduction='none'); sink.append(v3)
                v4 = torch.cumsum(v3, 1); sink.append(v4)
                v5 = torch.cat([v2, v4], 1)[:, 2:6]; sink.append(v5)
            v6 = torch.matmul(x0, v1); sink.append(v6)
        v7 = F.pad(v6.reshape(1, 1, 4, 4), [1, 1, 1, 1], mode='replicate').reshape(6, 6)[1:5, 1:5]; sink.append(v7)
        return (v5, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = False
OUTER = None
SAVE = True
RUNTIME_JITAMP = True
ALTERNATE = True


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(363374)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float64)
    flag = flag
    dev = 'cuda'
    return [x0, flag, dev]


def build():
    torch.manual_seed(363374)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
