"""The bundled example: a small model that uses autocast inside
torch.jit.script code, rewritten by jitamp and checked against eager.

    python -m jitamp example
"""
from __future__ import annotations

import torch
from torch import nn

from ._deprecation import torchscript_deprecation_ignored


class TinyEncoder(nn.Module):
    """Linear -> GELU -> LayerNorm under bf16 autocast, softmax scores, and a
    float32 region inside (enabled=False), as a user's model might."""

    def __init__(self, width: int = 32):
        super().__init__()
        self.proj = nn.Linear(width, width)
        self.norm = nn.LayerNorm(width)
        self.out = nn.Linear(width, width)

    def forward(self, x: torch.Tensor, use_amp: bool = True) -> torch.Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=use_amp):
            h = self.norm(torch.nn.functional.gelu(self.proj(x)))
            scores = torch.softmax(h @ h.transpose(-1, -2), dim=-1)
            with torch.autocast("cpu", enabled=False):
                stats = torch.cdist(h.float(), h.float())
            y = self.out(scores @ h) + stats.mean()
        return y


def run(show_graph: bool = True) -> bool:
    import jitamp

    torch.manual_seed(0)
    model = TinyEncoder().eval()
    x = torch.randn(4, 8, 32)
    with torchscript_deprecation_ignored(), jitamp.enable():
        scripted = torch.jit.script(model)
    if show_graph:
        graph = scripted.forward.graph.copy()
        torch._C._jit_pass_inline(graph)
        torch._C._jit_pass_canonicalize(graph)
        print("Rewritten graph of TinyEncoder.forward (callees inlined):")
        print(graph.str(False))
    ok = True
    for use_amp in (True, False):
        eager = model(x, use_amp)
        same = True
        for _call in range(3):
            got = scripted(x, use_amp)
            same &= got.dtype == eager.dtype and torch.equal(got, eager)
        ok &= same
        print(
            f"use_amp={use_amp}: eager {eager.dtype}, scripted {got.dtype}, "
            f"{'bitwise equal' if same else 'DIFFERENT'} on calls 1-3"
        )
    print("OK: scripted matches eager autocast" if ok else "FAILED: scripted differs from eager")
    return ok
