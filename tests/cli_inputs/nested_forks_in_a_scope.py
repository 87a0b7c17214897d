"""Scripted functions that fork, inside an autocast scope, a function that
forks a function that forks (three levels; the innermost matmul casts
under the scope's state; in g0 each level forks and waits inside a scope of
its own), called from two threads at once, each in its own
eager region (none, bfloat16). Every result is compared with eager's in the
same region, and every thread's autocast state after each call with its
state before; then each inter-op pool thread's state, read by forked tasks,
with a fresh thread's. Prints "done" when all agree (with `plain`, plain
TorchScript, which does not autocast in tasks: when every call returned); run by
tests/test_threads.py in a process of its own (it hung before jitamp's
waits let a task's thread go)."""
import sys
import threading
import warnings
from typing import List

import torch
from torch import Tensor

warnings.simplefilter("ignore")
if sys.argv[1] == "jitamp":
    import jitamp
    jitamp.enable()
from jitamp.testing import autocast_state


def f3(x: Tensor) -> Tensor:
    return torch.mm(x, x)


def f2(x: Tensor) -> Tensor:
    fut = torch.jit.fork(f3, x)
    return torch.jit.wait(fut) + 1.0


def f1(x: Tensor) -> Tensor:
    fut = torch.jit.fork(f2, x)
    return torch.jit.wait(fut) * 2.0


def f0(x: Tensor) -> Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        fut = torch.jit.fork(f1, x)
        y = torch.jit.wait(fut) + 1.0
    return torch.mm(y, y)


def g2(x: Tensor) -> Tensor:
    with torch.autocast("cpu", dtype=torch.float16):
        fut = torch.jit.fork(f3, x)
        y = torch.jit.wait(fut) + 1.0
    return y


def g1(x: Tensor) -> Tensor:
    with torch.autocast("cpu", enabled=False):
        fut = torch.jit.fork(g2, x)
        y = torch.jit.wait(fut) * 2.0
    return torch.mm(y.float(), x)


def g0(x: Tensor) -> Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        fut = torch.jit.fork(g1, x)
        y = torch.mm(torch.jit.wait(fut), x)
    return torch.mm(y, y)


@torch.jit.ignore
def thread_state() -> List[str]:
    return [repr(autocast_state())]


def probe(x: Tensor) -> List[str]:
    return thread_state()


def probes(x: Tensor) -> List[str]:
    futs = [torch.jit.fork(probe, x) for _ in range(8)]
    states: List[str] = []
    for fut in futs:
        states += torch.jit.wait(fut)
    return states


FUNCTIONS = [f0, g0]
scripted = [torch.jit.script(f) for f in FUNCTIONS]
scripted_probes = torch.jit.script(probes)
x = torch.randn(4, 4)
REGIONS = [None, torch.bfloat16]


def region(dtype):
    if dtype is None:
        return torch.autocast("cpu", enabled=False)
    return torch.autocast("cpu", dtype=dtype, cache_enabled=False)


expected = {}
for dtype in REGIONS:
    with region(dtype):
        expected[dtype] = [f(x) for f in FUNCTIONS]
failures = []


def calls(dtype):
    with region(dtype):
        before = autocast_state()
        for call in range(10):
            for f, want in zip(scripted, expected[dtype]):
                got = f(x)
                if got.dtype != want.dtype or not torch.equal(got, want):
                    failures.append(f"{dtype} {f.name} call {call}: {got.dtype} differs from eager's {want.dtype}")
                if autocast_state() != before:
                    failures.append(f"{dtype} {f.name} call {call}: state {autocast_state()} != {before}")


threads = [threading.Thread(target=calls, args=(d,)) for d in REGIONS]
for t in threads:
    t.start()
for t in threads:
    t.join()
fresh = repr(autocast_state())
for _ in range(5):
    states = scripted_probes(x)
    if states != [fresh] * 8:
        failures.append(f"pool threads' state {sorted(set(states))} != a fresh thread's {fresh}")
print("done" if sys.argv[1] == "plain" else "\n".join(failures[:5]) or "done")
