# jitamp_fuzz program: seed 112902, index 19130 (torch 2.13; shrunk by hand)
# Reproduce: python tools/jitamp_fuzz --seed 112902 --index 19130
# Frozen comparison. Eager raises in the scripted helper h1, called only
# forked, inside a scope with autocast off: mm of a float16 value (the
# caller region's mm) and a float32 one. Nothing reads the mm's result but
# huber_loss's size check, which keeps it in the scripted program;
# torch.jit.freeze folds that check (both sizes are one value's) and drops
# the mm, as plain TorchScript does (test_frozen_drops_a_dead_op_of_a_
# forked_callee_is_torchscripts), so the frozen model returns. The runner's dead-code rule now looks into
# forks' subgraphs (runner._forks_inlined).
import torch
import jitamp  # noqa: F401
import torch.nn.functional as F
from torch import Tensor


@torch.jit.script
def h1(a: Tensor, b: Tensor) -> Tensor:
    v11 = torch.mm(a, b)
    v12 = F.huber_loss(v11, v11, reduction='none')
    return a


class Prog(torch.nn.Module):
    def forward(self, x0: Tensor, x1: Tensor, flag: bool, dt: torch.dtype) -> Tensor:
        v = torch.mm(x0, x1)
        with torch.autocast('cpu', enabled=False):
            fut = torch.jit.fork(h1, v, x1); r = torch.jit.wait(fut)
        return r


# --- harness (plain Python, never scripted) ---
KIND = 'module'
GRAD = False
OUTER = ('cpu', 'float16', True)
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = False
EXECUTOR = 'simple'
ADD_AUTOCAST = 'float16'
THREADS = None


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(478570)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    x1 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    dt = torch.float16
    return [x0, x1, flag, dt]


def build():
    torch.manual_seed(478570)
    return Prog()


if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
