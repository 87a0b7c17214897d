"""Threads: autocast state is per thread, in eager and in jitamp's graphs."""
import threading

import pytest

import torch
from torch import nn

from oracle import autocast_state, script

CALLS = 1000


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        a = self.fc(x)  # runs under the caller's autocast, if any
        with torch.autocast("cpu", dtype=torch.bfloat16):
            b = torch.mm(a, a.t())
            with torch.autocast("cpu", enabled=False):
                c = torch.mm(x, x.t())
        return a, b, c, torch.is_autocast_cpu_enabled()


# What each thread's caller does: no autocast, or an eager region.
SETTINGS = [None, torch.bfloat16, torch.float16, None, torch.bfloat16, torch.float16, None, torch.float16]


def _region(dtype):
    # cache_enabled=False: eager's weight-cast cache is one per process,
    # keyed by the weight alone, so threads autocasting one module to
    # different dtypes would read each other's casts -- in eager as well.
    if dtype is None:
        return torch.autocast("cpu", enabled=False)
    return torch.autocast("cpu", dtype=dtype, cache_enabled=False)


def test_eight_threads_see_only_their_own_autocast_state():
    torch.manual_seed(0)
    model = Model().eval()
    scripted = script(model)
    x = torch.randn(4, 8)
    expected = {}
    with torch.no_grad():
        for dtype in set(SETTINGS):
            with _region(dtype):
                expected[dtype] = model(x)
                for _ in range(3):  # warm the executor in every state
                    scripted(x)
    failures = []

    def worker(index, dtype):
        try:
            with torch.no_grad(), _region(dtype):
                inside = autocast_state()
                for call in range(CALLS):
                    got = scripted(x)
                    want = expected[dtype]
                    if not all(
                        (g.dtype == w.dtype and torch.equal(g, w)) if isinstance(w, torch.Tensor) else g == w
                        for g, w in zip(got, want)
                    ):
                        failures.append(f"thread {index} ({dtype}) call {call}: result differs from eager")
                        return
                    if autocast_state() != inside:
                        failures.append(f"thread {index} ({dtype}) call {call}: state {autocast_state()} != {inside}")
                        return
        except Exception as error:  # reported below
            failures.append(f"thread {index}: {error!r}")

    threads = [threading.Thread(target=worker, args=(i, d)) for i, d in enumerate(SETTINGS)]
    before = autocast_state()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures[:5]
    assert autocast_state() == before


def _run_nested_forks(which: str) -> str:
    import subprocess
    import sys
    from pathlib import Path
    script = Path(__file__).parent / "cli_inputs" / "nested_forks_in_a_scope.py"
    try:
        done = subprocess.run([sys.executable, str(script), which], capture_output=True, text=True,
                              timeout=20)
    except subprocess.TimeoutExpired:
        return "hang"
    return done.stdout.strip() or done.stderr[-2000:]


def test_nested_forks_in_a_scope_run_in_plain_torchscript():
    assert _run_nested_forks("plain") == "done"


def test_nested_forks_in_a_scope_return_eagers_results_and_leave_every_thread_as_it_was():
    # Fuzz seed 112807, index 37463: jitamp's waits blocked every thread, so
    # tasks that fork and wait held both inter-op pool threads while the
    # tasks they waited for were queued (a hang). Now a task's wait outside
    # its own scopes lends the task's state to the wait and lets the thread
    # go (docs/runtime-model.md, 'Guards and forked tasks').
    assert _run_nested_forks("jitamp") == "done"


_FORK_THEN_EXIT = """
import torch, warnings
warnings.filterwarnings("ignore")
import jitamp
jitamp.enable()
from typing import List
from torch import Tensor

@torch.jit.script
def helper(a: Tensor, b: Tensor) -> Tensor:
    for i in range(2):
        b = torch.cdist(a, b)
    return b

class Model(torch.nn.Module):
    def forward(self, x: Tensor, y: Tensor) -> List[Tensor]:
        return [torch.jit.wait(torch.jit.fork(helper, x, y)), x]

model = torch.jit.script(Model())
x, y = torch.randn(4, 4), torch.randn(4, 4)
for _ in range(3):
    model(x, y)
print("returned", flush=True)
"""


def test_a_process_that_ran_a_fork_exits_cleanly(tmp_path):
    """A script that calls a model with a fork and ends right after. jitamp's
    wait returns when the task's future is done, before the task's thread
    lets the task go; that thread's last reference to a tensor Python has
    seen needs the GIL, and taking it while Python finalizes aborted the
    process ("terminate called without an active exception", about 4 runs
    in 10 on a 2-core AMD EPYC). At exit jitamp waits for the inter-op
    threads (jitamp._C.wait_for_task_threads). Eight runs: a run aborts
    with that probability at most."""
    import subprocess
    import sys
    script = tmp_path / "fork_then_exit.py"  # TorchScript reads the source
    script.write_text(_FORK_THEN_EXIT)
    for run in range(8):
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
        assert (done.returncode, done.stdout) == (0, "returned\n"), (run, done.returncode, done.stderr[-2000:])
