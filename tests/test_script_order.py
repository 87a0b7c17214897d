"""Scripting with jitamp and without it in one process, in either order
(issue: enable()/disable() used to break later scripting of F.interpolate,
whose `@overload` declarations TorchScript deletes once compiled). Each case
runs in a fresh process, so what was compiled before is what the case says.
"""
import textwrap

import pytest

from oracle import run_program

PRELUDE = """
import warnings
warnings.filterwarnings("ignore")
import torch
import torch.nn.functional as F
from torch import nn
import jitamp
from oracle import check_against_eager, cpu_autocast, script


def resize_like(x, y):
    return F.interpolate(x, size=y.shape[-2:], mode="bilinear", align_corners=False)


def resize_in_scope(x, y):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        z = F.interpolate(x, size=y.shape[-2:], mode="bilinear", align_corners=False)
        w = torch.mm(x[0, 0], x[0, 0])
    return z, w


class PlainSegHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        return F.interpolate(self.conv(x), size=x.shape[-2:], mode="bilinear", align_corners=False)


class SegHead(PlainSegHead):
    # (PyTorch's built-in JIT autocast fails on this one: biased conv.)
    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            h = self.conv(x)
        return F.interpolate(h, size=x.shape[-2:], mode="bilinear", align_corners=False)


x, y = torch.randn(1, 3, 4, 4), torch.randn(1, 3, 8, 8)


def plain():
    f = torch.jit.script(resize_like)
    assert torch.equal(f(x, y), resize_like(x, y))
    m = PlainSegHead()
    s = torch.jit.script(m)
    assert torch.equal(s(x), m(x))


def with_jitamp():
    check_against_eager(resize_in_scope, [x, y])
    check_against_eager(resize_in_scope, [x, y], outer=cpu_autocast(torch.float16))
    m = SegHead()
    check_against_eager(m, [x], scripted=script(m), grad=True)
"""

ORDERS = {
    "plain_then_jitamp": "plain(); with_jitamp()",
    "jitamp_then_plain": "with_jitamp(); plain()",
    "plain_jitamp_plain_jitamp": "plain(); with_jitamp(); plain(); with_jitamp()",
}


@pytest.mark.parametrize("order", list(ORDERS))
def test_scripting_in_any_order(order, tmp_path):
    done = run_program(tmp_path, textwrap.dedent(PRELUDE) + "\n" + ORDERS[order] + "\nprint('done')\n")
    assert done.returncode == 0 and done.stdout.strip().endswith("done"), done.stderr[-3000:]
