# jitamp fuzz program: seed 2026, index 4352
# Reproduce: python -m jitamp.fuzz --seed 2026 --index 4352
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


def prog(x0: Tensor, x1: Tensor, x2: Tensor, flag: bool) -> Tuple[Tensor, Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    v2 = x0
    v3 = x0
    v4 = x0
    v6 = x0
    for i15 in range(2):
        v6 = torch.prod(v4, 1, keepdim=True) + v2; sink.append(v6)
        for i14 in range(2):
            v11 = torch.trace(v6) + x1; sink.append(v11)
            v3 = x0
    v19 = x0
    return (v6, v19, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = False
OUTER = None
SAVE = False
RUNTIME_JITAMP = False
ALTERNATE = False


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(499487)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    x1 = torch.randn(4, 4, generator=g).to(torch.float32)
    x2 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    return [x0, x1, x2, flag]


def build():
    torch.manual_seed(499487)
    return prog


if __name__ == "__main__":
    # Self-contained reproducer: prints eager against scripted (jitamp) for
    # calls 1, 2, 3, then runs the fuzzer's comparison (tests' oracle rules).
    import contextlib, os, sys, tempfile, warnings
    warnings.simplefilter("ignore")
    import jitamp
    from jitamp.fuzz import runner
    outer = runner.make_outer(OUTER)
    with runner.jitamp_enabled(True):
        scripted = torch.jit.script(build())
    eager = build()
    with runner.jitamp_enabled(RUNTIME_JITAMP):
        for call in (1, 2, 3):
            for side, fn in (("eager", eager), ("scripted", scripted)):
                with (outer() if outer else contextlib.nullcontext()):
                    try:
                        out = fn(*make_args(call))
                        outs = out if isinstance(out, tuple) else (out,)
                        print(f"call {call} {side}:", [(o.dtype, o.flatten()[:4].tolist()) for o in outs])
                    except Exception as exc:
                        print(f"call {call} {side} raised {type(exc).__name__}: {str(exc)[-300:]}")
    with open(__file__) as f:
        source = f.read()
    result = runner.run_source(source, tempfile.mkdtemp())
    print("fuzz comparison:", result.kind)
    print(result.message)
    sys.exit(0 if result.kind == "ok" else 1)
