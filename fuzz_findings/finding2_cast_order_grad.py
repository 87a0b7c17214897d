# jitamp fuzz program: seed 1, index 351
# Reproduce: python -m jitamp.fuzz --seed 1 --index 351
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


def prog(x0: Tensor, x1: Tensor, flag: bool, dt: torch.dtype, n: int, dev: str) -> Tuple[Tensor, Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    v1 = x0
    v2 = torch.einsum('ij,jk->ik', x1, v1); sink.append(v2)
    v4 = F.margin_ranking_loss(v2, v2, x1, reduction='none'); sink.append(v4)
    return (x0, x0, sink)


# --- harness (plain Python, never scripted) ---
KIND = 'function'
GRAD = True
OUTER = ('cpu', 'float16', True)
SAVE = False
RUNTIME_JITAMP = True
ALTERNATE = False


def make_args(call: int) -> list:
    g = torch.Generator().manual_seed(305567)
    flag = call % 2 == 1 if ALTERNATE else True
    x0 = torch.randn(4, 4, generator=g).to(torch.float32)
    x1 = torch.randn(4, 4, generator=g).to(torch.float32)
    flag = flag
    dt = torch.float16
    n = 3 if flag else 1
    dev = 'cpu'
    return [x0, x1, flag, dt, n, dev]


def build():
    torch.manual_seed(305567)
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
