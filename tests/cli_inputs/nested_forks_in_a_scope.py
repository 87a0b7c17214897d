"""A scripted function that forks, inside an autocast scope, a function
that forks a function that forks (three levels), called from two threads
(tests/test_threads.py runs this file in a process of its own). Prints
"done" when every call returned."""
import sys
import threading
import warnings

import torch
from torch import Tensor

warnings.simplefilter("ignore")
if sys.argv[1] == "jitamp":
    import jitamp
    jitamp.enable()


def f3(x: Tensor) -> Tensor:
    return x * 2.0


def f2(x: Tensor) -> Tensor:
    fut = torch.jit.fork(f3, x)
    return torch.jit.wait(fut) + 1.0


def f1(x: Tensor) -> Tensor:
    fut = torch.jit.fork(f2, x)
    return torch.jit.wait(fut) + 1.0


def f0(x: Tensor) -> Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        fut = torch.jit.fork(f1, x)
        y = torch.jit.wait(fut) + 1.0
    return y


scripted = torch.jit.script(f0)
results = []


def calls():
    for _ in range(5):
        results.append(scripted(torch.ones(2)))


threads = [threading.Thread(target=calls) for _ in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert all(torch.equal(r, f0(torch.ones(2))) for r in results)
print("done")
