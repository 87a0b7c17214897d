"""torch.jit.fork / wait with autocast scopes."""
import os
import time

import pytest
import torch
from torch import Tensor

import jitamp
import oracle
from oracle import check_against_eager
from scenario_helpers import OUTERS, WARNING_FILTERS, X, Y, odd, rand

pytestmark = WARNING_FILTERS


def _fork_target(a: Tensor, b: Tensor) -> Tensor:
    return torch.cat([torch.mm(a, b), a])


def _fork_target_scoped(a: Tensor, b: Tensor) -> Tensor:
    with torch.autocast("cpu", dtype=torch.float16):
        r = torch.mm(a, b)
    return r


def fork_in_scope(x: Tensor, y: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        f1 = torch.jit.fork(_fork_target, x, y)
        f2 = torch.jit.fork(_fork_target_scoped, x, y)
        a = torch.jit.wait(f1)
        b = torch.jit.wait(f2)
    return a, b


def fork_in_scope_wait_outside(x: Tensor, y: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        f1 = torch.jit.fork(_fork_target, x, y)
    a = torch.jit.wait(f1)
    return a, torch.mm(x, y)


def fork_op_in_scope(x: Tensor, y: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        f = torch.jit.fork(torch.mm, x, y)
        a = torch.jit.wait(f)
    return a


def fork_outside_scope(x: Tensor, y: Tensor):
    f = torch.jit.fork(_fork_target_scoped, x, y)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        a = torch.mm(x, y)
    return a, torch.jit.wait(f)


FORKS_OK = [fork_in_scope_wait_outside, fork_outside_scope]


@pytest.mark.parametrize("outer", ["no_outer", "outer_fp16"])
@pytest.mark.parametrize("fn", FORKS_OK, ids=[f.__name__ for f in FORKS_OK])
def test_fork_wait(fn, outer):
    check_against_eager(fn, [X, Y], outer=OUTERS[outer])


# Regression: torch.jit.wait inside a scope on a future that is not done yet
# used to suspend the interpreter, and the rest of the graph (including
# jitamp::autocast_exit) then ran as a continuation on an inter-op worker
# thread: the caller's thread was left with the scope's autocast state and
# nesting +1. Large inputs, and a forked task that sleeps, make sure the
# future is still running when the caller reaches the wait.
X_BIG = rand(384, 384, seed=30)
Y_BIG = rand(384, 384, seed=31)


@torch.jit.ignore
def _slow_mm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    time.sleep(0.003)
    return torch.mm(a, b)


def _fork_target_slow(a: Tensor, b: Tensor) -> Tensor:
    return torch.cat([_slow_mm(a, b), torch.mm(a, b)])


def fork_slow_wait_in_scope(x: Tensor, y: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        f = torch.jit.fork(_fork_target_slow, x, y)
        with torch.autocast("cpu", dtype=torch.float16, cache_enabled=False):
            a = torch.jit.wait(f)
            b = torch.mm(x, y)
        c = torch.mm(x, y)
    return a, b, c, torch.mm(x, y)


FORKS_WAIT_IN_SCOPE = [fork_in_scope, fork_op_in_scope, fork_slow_wait_in_scope]


@pytest.mark.parametrize("outer", ["no_outer", "outer_fp16"])
@pytest.mark.parametrize("fn", FORKS_WAIT_IN_SCOPE, ids=[f.__name__ for f in FORKS_WAIT_IN_SCOPE])
def test_fork_wait_in_scope(fn, outer):
    args = [X, Y] if fn is fork_slow_wait_in_scope else [X_BIG, Y_BIG]
    check_against_eager(fn, args, outer=OUTERS[outer])


def fork_op_dynamic_flag(x: Tensor, y: Tensor, flag: bool):
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=flag):
        r = torch.jit.wait(torch.jit.fork(torch.mm, x, y))
    return r


def fork_op_dynamic_dtype(x: Tensor, y: Tensor, flag: bool):
    with torch.autocast("cpu", dtype=torch.float16 if flag else torch.bfloat16):
        r = torch.jit.wait(torch.jit.fork(torch.mm, x, y))
    return r


@pytest.mark.parametrize("start", [True, False])
@pytest.mark.parametrize("fn", [fork_op_dynamic_flag, fork_op_dynamic_dtype], ids=["flag", "dtype"])
def test_fork_dynamic_scope(fn, start):
    check_against_eager(fn, [X, Y, start], args_for_call=lambda i: [X, Y, odd(i) == start])


@pytest.fixture
def builtin_jit_autocast_on():
    """The oracle's convention: jitamp is enabled only while scripting, so at
    run time PyTorch's built-in JIT autocast is on (its default)."""
    was_enabled = jitamp.is_enabled()
    jitamp.disable()
    prev = torch._C._jit_set_autocast_mode(True)
    yield
    torch._C._jit_set_autocast_mode(prev)
    if was_enabled:
        jitamp.enable()


@pytest.fixture
def jitamp_enabled_at_run_time():
    """jitamp stays enabled while the scripted code runs (built-in JIT
    autocast off)."""
    was_enabled = jitamp.is_enabled()
    jitamp.enable()
    yield
    if not was_enabled:
        jitamp.disable()


def _fork_target_disables(a: Tensor) -> Tensor:
    with torch.autocast("cpu", enabled=False):
        r = torch.mm(a, a)
    return r


def fork_disabling_target_in_scope(x: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        r = torch.jit.wait(torch.jit.fork(_fork_target_disables, x))
    return r, torch.mm(x, x)


def fork_disabling_target(x: Tensor):
    return torch.jit.wait(torch.jit.fork(_fork_target_disables, x))


FORK_DISABLING = [
    pytest.param(fork_disabling_target_in_scope, "no_outer", id="in_scripted_scope"),
    pytest.param(fork_disabling_target, "outer_bf16", id="in_eager_region"),
]
@pytest.mark.parametrize("fn, outer", FORK_DISABLING)
def test_fork_target_disables(fn, outer, builtin_jit_autocast_on):
    """With PyTorch's built-in JIT autocast on at run time (after
    jitamp.disable()): the fork's plan is made without graph optimizations
    (jitamp::autocast_task_state), so the built-in autocast pass, which runs
    among them, never sees the fork subgraph (it used to insert static bf16
    casts there, from the worker's inherited state)."""
    check_against_eager(fn, [X], outer=OUTERS[outer])


@pytest.mark.parametrize("fn, outer", FORK_DISABLING)
def test_fork_target_disables_jitamp_enabled(fn, outer, jitamp_enabled_at_run_time):
    check_against_eager(fn, [X], outer=OUTERS[outer])


def _fork_target_raises(a: Tensor, flag: bool) -> Tensor:
    with torch.autocast("cpu", dtype=torch.float16):
        if flag:
            raise RuntimeError("fork boom")
        r = torch.mm(a, a)
    return r


def fork_raises_in_scope(x: Tensor, flag: bool):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        r = torch.jit.wait(torch.jit.fork(_fork_target_raises, x, flag))
        z = torch.mm(x, x)
    return r, z


def fork_raises(x: Tensor, flag: bool):
    return torch.jit.wait(torch.jit.fork(_fork_target_raises, x, flag))


class _single_cpu:
    """Pin every thread of this process to one CPU (restored on exit).

    Makes the scheduler interleave the caller and the inter-op worker
    tightly, so a forked task often runs to completion before the caller's
    FORK instruction has finished. Without it the race below shows only on
    a loaded machine."""

    def __enter__(self):
        self.saved = os.sched_getaffinity(0)
        self._pin({min(self.saved)})
        return self

    def __exit__(self, *exc):
        self._pin(self.saved)

    @staticmethod
    def _pin(cpus):
        for tid in os.listdir("/proc/self/task"):
            try:
                os.sched_setaffinity(int(tid), cpus)
            except OSError:
                pass


needs_affinity = pytest.mark.skipif(
    not hasattr(os, "sched_setaffinity") or not os.path.isdir("/proc/self/task"),
    reason="needs Linux thread affinity")

# Regression: when a forked task raises inside its scope and finishes before
# the caller's FORK instruction drops its reference to the forked interpreter
# state, the task's open guard used to be destroyed -- and closed -- on the
# calling thread (its nesting went to -1, -2, ...). The guard now restores
# only on the thread that entered. Deterministic with all threads pinned to
# one CPU.
@needs_affinity
@pytest.mark.parametrize("fn, outer", [
    pytest.param(fork_raises_in_scope, "no_outer", id="in_scripted_scope"),
    pytest.param(fork_raises_in_scope, "outer_fp16", id="in_scripted_scope_outer_fp16"),
    pytest.param(fork_raises, "outer_bf16", id="in_eager_region"),
    pytest.param(fork_raises, "no_outer", id="no_scope_in_caller"),
])
def test_fork_target_raises(fn, outer):
    with _single_cpu():
        check_against_eager(fn, [X, True], outer=OUTERS[outer], calls=(1, 2, 3, 10, 100),
                            args_for_call=lambda i: [X, odd(i)])


@needs_affinity
@pytest.mark.parametrize("fn", [fork_in_scope, fork_op_in_scope, fork_slow_wait_in_scope, fork_op_dynamic_flag],
                         ids=lambda f: f.__name__)
def test_fork_wait_in_scope_single_cpu(fn):
    # The same interleaving without an exception: the exit op closes the
    # guard on the thread that opened it, whatever the scheduling.
    with _single_cpu():
        if fn is fork_op_dynamic_flag:
            check_against_eager(fn, [X, Y, True], calls=(1, 2, 3, 10, 60),
                                args_for_call=lambda i: [X, Y, odd(i)])
        else:
            check_against_eager(fn, [X, Y], calls=(1, 2, 3, 10, 60))


# The task adopts the caller's cache flag, which TorchScript's fork never
# hands over: eager runs the task at once, on the caller's thread, with
# cache_enabled=False, so the second mm sees the weight's new values; a task
# with the cache on would reuse the first cast of the weight (a leaf that
# requires grad, the casts the cache keeps: hence grad=True, with which the
# oracle passes leaves that require grad).
def _fork_target_rescales(w: Tensor, x: Tensor) -> Tensor:
    a = torch.mm(x, w)
    with torch.no_grad():
        w.mul_(2.0)
    b = torch.mm(x, w)
    with torch.no_grad():
        w.div_(2.0)
    return torch.cat([a, b])


def fork_in_uncached_scope(w: Tensor, x: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16, cache_enabled=False):
        r = torch.jit.wait(torch.jit.fork(_fork_target_rescales, w, x))
    return r


def test_fork_adopts_the_cache_flag():
    w = rand(4, 4, seed=40).requires_grad_()
    with torch.autocast("cpu", dtype=torch.bfloat16, cache_enabled=False):
        eager = fork_in_uncached_scope(w, X)
    # The case can fail: the two halves differ only if the cache is off.
    assert not torch.equal(eager[:4], eager[4:])
    check_against_eager(fork_in_uncached_scope, [w, X], grad=True)


# The cast cache is one for the whole process: eager runs the task inside the
# caller's region, so the caller's later casts of the same leaves reuse the
# task's (one cast node each, whose gradient sums both uses in bfloat16). The
# task's end must not clear the cache while the caller's scope is open.
def _fork_target_mm(a: Tensor, b: Tensor) -> Tensor:
    return torch.mm(a, b)


def fork_then_recast(x: Tensor, w: Tensor, v: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        a = torch.jit.wait(torch.jit.fork(_fork_target_mm, x, w))
        b = torch.mm(x, v)
    return a, b


@pytest.mark.parametrize("outer", ["no_outer", "outer_bf16"])
def test_fork_shares_the_callers_cast_cache(outer):
    x, w, v = rand(16, 16, seed=41), rand(16, 16, seed=42), rand(16, 16, seed=43)
    check_against_eager(fork_then_recast, [x, w, v], grad=True, outer=OUTERS[outer])


# The same when the caller leaves its scope before the task casts: eager ran
# the whole task first, so the cache must outlive the caller's exit until the
# task has ended (the task sleeps to make the order certain).
def _fork_target_slow_mm(a: Tensor, b: Tensor) -> Tensor:
    return torch.mm(_slow_identity(a), b)


@torch.jit.ignore
def _slow_identity(a: torch.Tensor) -> torch.Tensor:
    time.sleep(0.02)
    return a


def fork_outlives_scope(x: Tensor, w: Tensor, v: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        fut = torch.jit.fork(_fork_target_slow_mm, x, w)
        b = torch.mm(x, v)
    return torch.jit.wait(fut), b


def test_fork_outliving_the_scope_shares_the_callers_cast_cache():
    x, w, v = rand(16, 16, seed=44), rand(16, 16, seed=45), rand(16, 16, seed=46)
    check_against_eager(fork_outlives_scope, [x, w, v], grad=True, calls=(1, 2, 3))


def cast_in_two_regions(w: Tensor):
    """A weight cast in one region, changed in place, cast in the next: the
    second cast is fresh only if the first region's exit cleared the cache
    (jitamp's exit, in the scripted version)."""
    with torch.autocast("cpu", dtype=torch.bfloat16):
        a = torch.mm(w, w)
    with torch.no_grad():
        w.mul_(2.0)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        b = torch.mm(w, w)
    return a, b


def fork_dropped(x: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        torch.jit.fork(_fork_target_mm, x, x)  # the future is never waited on
        y = torch.mm(x, x)
    return y


def test_forks_leave_the_cache_to_be_cleared():
    """However a task forked in a scope ends (waited on, raising, dropped by
    TorchScript's optimizer as unused), the caller's outermost exits clear
    eager's cast cache again afterwards."""
    w = rand(4, 4, seed=47)
    check_against_eager(cast_in_two_regions, [w], grad=True)
    check_against_eager(fork_then_recast, [X, Y, X], grad=True)
    check_against_eager(fork_raises_in_scope, [X, True], args_for_call=lambda i: [X, odd(i)])
    check_against_eager(fork_dropped, [X], grad=True)
    dropped = oracle.script(fork_dropped, profiling_executor=True)
    for _ in range(5):
        dropped(X)
    torch.jit.wait(torch.jit.fork(torch.mm, X, X))
    time.sleep(0.05)  # tasks still running may keep it until they end
    check_against_eager(cast_in_two_regions, [w], grad=True)
