"""Resident memory over 100,000 calls of a jitamp-scripted module.

    python benchmarks/memory_loop.py [--calls N]

Calls a scripted module (scopes, smart casts, an eager autocast region
around every other call, an exception inside a scope every 1,000 calls) and
prints resident memory (RSS) after warm-up and every 20,000 calls. A leak
of even one small tensor or guard per call would show as megabytes.
"""
from __future__ import annotations

import argparse
import os
import warnings

import torch
from torch import nn

import jitamp

warnings.filterwarnings("ignore", category=DeprecationWarning)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)

    def forward(self, x, fail: bool):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = self.fc(x)
            with torch.autocast("cpu", enabled=False):
                z = torch.mm(y.float(), y.float().t())
            if fail:
                raise RuntimeError("planned failure")
        return z.sum() + y.float().sum()


def rss_mib() -> float:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=100_000)
    args = parser.parse_args()
    with jitamp.enable():
        model = torch.jit.script(Model())
    x = torch.randn(4, 16, requires_grad=True)

    def call(i: int) -> None:
        fail = i % 1000 == 999
        try:
            if i % 2:
                with torch.autocast("cpu", dtype=torch.float16):
                    out = model(x, fail)
            else:
                out = model(x, fail)
            out.backward()
        except torch.jit.Error as error:  # what a scripted `raise` becomes
            assert "planned failure" in str(error)

    for i in range(2000):  # warm-up: executor plans, allocator pools
        call(i)
    start = rss_mib()
    print(f"after warm-up: {start:.1f} MiB")
    for i in range(args.calls):
        call(i)
        if (i + 1) % 20_000 == 0:
            print(f"after {i + 1:>7} calls: {rss_mib():.1f} MiB ({rss_mib() - start:+.1f})")
    assert not torch.is_autocast_enabled("cpu"), "autocast state leaked"
    print(f"growth over {args.calls} calls: {rss_mib() - start:+.2f} MiB")


if __name__ == "__main__":
    main()
