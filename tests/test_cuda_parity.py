"""CUDA autocast against eager, on a CUDA device (skipped without one).

CUDA's policy differs from CPU's (fp16 lists, `cross_entropy` left to the
ops it reaches): CPU-only CI skips this file; run it where there is a GPU."""
import pytest
import torch
import torch.nn.functional as F
from torch import Tensor, nn

import oracle
from oracle import check_against_eager

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device; none on this machine")

DTYPES = [torch.float16, torch.bfloat16]
DTYPE_IDS = ["float16", "bfloat16"]


def _cuda(*shape: int, seed: int = 0) -> Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).cuda()


def ce_fp16(x: Tensor, target: Tensor):
    with torch.autocast("cuda", dtype=torch.float16):
        return F.cross_entropy(x, target), F.cross_entropy(x.half(), target)


def ce_bf16(x: Tensor, target: Tensor):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        return F.cross_entropy(x, target), F.cross_entropy(x.to(torch.bfloat16), target)


@pytest.mark.parametrize("fn", [ce_fp16, ce_bf16], ids=DTYPE_IDS)
def test_cross_entropy_values_and_grads(fn):
    # eager reaches log_softmax with the half input (its fp32 policy): the
    # values, not only the dtypes, must be eager's.
    x = _cuda(64, 1000, seed=1)
    target = torch.randint(0, 1000, (64,), generator=torch.Generator().manual_seed(2)).cuda()
    check_against_eager(fn, [x, target], grad=True)


class Block(nn.Module):
    def __init__(self, dtype: torch.dtype):
        super().__init__()
        self.dtype = dtype
        self.fc1, self.fc2 = nn.Linear(64, 256), nn.Linear(256, 64)
        self.norm = nn.LayerNorm(64)
        self.conv = nn.Conv2d(4, 8, 3, padding=1)

    def forward(self, x, img):
        with torch.autocast("cuda", dtype=self.dtype):
            h = x + self.fc2(F.gelu(self.fc1(self.norm(x))))
            att = torch.softmax(h @ h.t(), dim=-1) @ h
            c = self.conv(img).relu().mean()
            with torch.autocast("cuda", enabled=False):
                s = att.float().sum()
        return att, c, s


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_block_values_and_grads(dtype):
    m = Block(dtype).cuda()
    check_against_eager(m, [_cuda(32, 64, seed=3), _cuda(2, 4, 16, 16, seed=4)],
                        scripted=oracle.script(m), grad=True)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_eager_cuda_region_around_a_scripted_cpu_scope(dtype):
    def fn(x: Tensor, c: Tensor):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            a = torch.mm(c, c)
        return torch.mm(x, x), a
    check_against_eager(fn, [_cuda(8, 8, seed=5), torch.randn(8, 8)],
                        outer=lambda: torch.autocast("cuda", dtype=dtype))
