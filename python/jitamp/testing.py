"""Check a function or module scripted with jitamp against eager autocast.

Eager autocast is the specification: `check_against_eager(fn, args)` runs
the same Python function (or nn.Module) eagerly and scripted with jitamp,
under the same autocast state, and compares. It scripts `fn` with jitamp
enabled, then for calls 1, 2, 3 and 10 (so the profiling executor's
optimized plan is covered) runs eager and scripted side by side and
compares: output structure, dtypes and values (bitwise by default), raised
errors (type and message, the rule below), gradients (dtype and value) with
grad=True, and the thread's autocast state after the call. A difference is
an AssertionError saying which call and what differs.

    import torch
    from jitamp.testing import check_against_eager, cpu_autocast

    def f(x, w):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return torch.mm(x, w).relu()

    x, w = torch.randn(4, 4), torch.randn(4, 4)
    check_against_eager(f, (x, w), grad=True)                # plain calls
    check_against_eager(f, (x, w), outer=cpu_autocast())     # inside an eager autocast

`assert_same(eager, scripted)` compares two results the same way, for a
model scripted (or saved and loaded) elsewhere. jitamp's own tests and its
differential fuzzer (tools/jitamp_fuzz, not shipped) use this module as
their oracle.

Errors (`assert_same_error`). TorchScript reports an error raised in scripted
code as "The following operation failed in the TorchScript interpreter.",
its scripted traceback, then `NAME: MESSAGE` -- once more around it for an
error raised in a forked task and re-raised by `torch.jit.wait`. Measured on
torch 2.13 (and what the rule compares):

- an op's error (c10 error) keeps its Python class (RuntimeError,
  NotImplementedError, ...); NAME is always "RuntimeError": the scripted
  exception must be of eager's exact class;
- a `raise ValueError("...")` statement in scripted code raises
  `torch.jit.Error` (not a RuntimeError subclass), a forked one RuntimeError;
  NAME is the qualified class ("builtins.ValueError"): it must be eager's
  class, and the scripted exception `torch.jit.Error` or RuntimeError;
- the message: with every interpreter layer removed, MESSAGE must equal
  eager's `str(exc)` exactly (trailing newlines aside) and be non-empty (an
  empty message proves nothing: give the raise a message).

TorchScript itself (with or without jitamp) changes some errors, which this
rule reports as differences: `assert` raises torch.jit.Error "AssertionError:
msg", a missing dict key RuntimeError "KeyError: k", a list index
RuntimeError, and a Python exception from a `@torch.jit.ignore` function
RuntimeError "ValueError: msg\n\nAt: <python frames>".
"""
from __future__ import annotations

import contextlib
import re
from typing import Any, Callable, Iterable, Sequence

import torch

import jitamp
from jitamp._deprecation import TORCHSCRIPT_DEPRECATION, torchscript_deprecation_ignored

__all__ = [
    "CALLS", "TORCHSCRIPT_DEPRECATION", "assert_same", "assert_same_error", "autocast_devices",
    "autocast_state", "check_against_eager", "clone_args", "cpu_autocast", "flatten",
    "no_grad_under", "reset_autocast_state", "run_side", "save_without_jitamp", "script",
    "script_without_jitamp", "torchscript_deprecation_ignored", "unwrap_torchscript_error",
]

CALLS = (1, 2, 3, 10)


# The device types whose autocast state eager keeps besides CPU's and CUDA's;
# PrivateUse1 under its current name (a backend may rename it at any time).
_OTHER_DEVICES = ("xpu", "ipu", "hpu", "xla", "mps", "mtia", "maia")


def autocast_devices() -> tuple[str, ...]:
    """The device types that have autocast state on this torch (eager's
    torch.amp.is_autocast_available and torch.get_autocast_dtype both
    answer), CPU and CUDA first."""
    found = ["cpu", "cuda"]
    for device in (*_OTHER_DEVICES, torch._C._get_privateuse1_backend_name()):
        try:
            if torch.amp.is_autocast_available(device):
                torch.get_autocast_dtype(device)
                found.append(device)
        except RuntimeError:  # not a device type of this torch, or no dtype
            pass
    return tuple(found)


def autocast_state() -> tuple:
    """Everything eager's autocast keeps per thread that Python can read:
    each device type's flag and dtype (autocast_devices()), the cache flag,
    the nesting depth (last)."""
    nesting = torch.autocast_increment_nesting() - 1
    torch.autocast_decrement_nesting()
    return (
        *((torch.is_autocast_enabled(d), torch.get_autocast_dtype(d)) for d in autocast_devices()),
        torch.is_autocast_cache_enabled(),
        nesting,
    )


def reset_autocast_state() -> None:
    """Back to a fresh thread's autocast state (for fixtures that keep a test
    which leaks state -- a bug the oracle reports there -- from failing the
    tests after it)."""
    for device in autocast_devices():
        torch.set_autocast_enabled(device, False)
    torch.set_autocast_dtype("cpu", torch.bfloat16)
    torch.set_autocast_dtype("cuda", torch.float16)
    torch.set_autocast_cache_enabled(True)
    while torch.autocast_decrement_nesting() > 0:
        pass
    if autocast_state()[-1] < 0:
        while torch.autocast_increment_nesting() < 0:
            pass
    torch.clear_autocast_cache()


def script(obj: Any, *, profiling_executor: bool = False) -> Any:
    """torch.jit.script with jitamp enabled (and the deprecation quiet)."""
    with torchscript_deprecation_ignored():
        was_enabled = jitamp.is_enabled()
        if was_enabled:
            jitamp.disable()
        try:
            with jitamp.enable(profiling_executor=profiling_executor):
                return torch.jit.script(obj)
        finally:
            if was_enabled:
                jitamp.enable()


def script_without_jitamp(obj: Any) -> Any:
    """Plain torch.jit.script, as a model in production was scripted (jitamp
    disabled meanwhile if it was enabled; the deprecation quiet)."""
    with torchscript_deprecation_ignored():
        was_enabled = jitamp.is_enabled()
        jitamp.disable()
        try:
            return torch.jit.script(obj)
        finally:
            if was_enabled:
                jitamp.enable()


def save_without_jitamp(model: Any, path: str) -> None:
    """A model scripted and saved without jitamp."""
    scripted = script_without_jitamp(model)
    with torchscript_deprecation_ignored():
        torch.jit.save(scripted, path)


def flatten(value: Any) -> list:
    """The leaves of nested tuples, lists and dicts (dicts by sorted key), in order."""
    if isinstance(value, (tuple, list)):
        out = []
        for item in value:
            out.extend(flatten(item))
        return out
    if isinstance(value, dict):
        out = []
        for key in sorted(value):
            out.extend(flatten(value[key]))
        return out
    return [value]


def assert_same(eager: Any, scripted: Any, *, exact: bool = True, what: str = "output",
                rtol: float | None = None, atol: float | None = None,
                atol_of_max: float = 0.0) -> None:
    """Same structure, dtypes and values (bitwise unless exact=False: then
    within rtol and an atol of at least atol_of_max times the largest
    magnitude of the eager tensor, for sums whose terms cancel)."""
    flat_e, flat_s = flatten(eager), flatten(scripted)
    assert len(flat_e) == len(flat_s), f"{what}: {len(flat_e)} values eager, {len(flat_s)} scripted"
    for i, (e, s) in enumerate(zip(flat_e, flat_s)):
        if isinstance(e, torch.Tensor):
            assert isinstance(s, torch.Tensor), f"{what}[{i}]: tensor eager, {type(s)} scripted"
            assert e.is_mkldnn == s.is_mkldnn, (
                f"{what}[{i}]: MKLDNN tensor {e.is_mkldnn} eager, {s.is_mkldnn} scripted")
            if e.is_mkldnn:  # no comparisons of their own: compared dense
                e, s = e.to_dense(), s.to_dense()
            assert e.dtype == s.dtype, f"{what}[{i}]: dtype {e.dtype} eager, {s.dtype} scripted"
            assert e.shape == s.shape, f"{what}[{i}]: shape {e.shape} eager, {s.shape} scripted"
            assert e.device == s.device, f"{what}[{i}]: device {e.device} eager, {s.device} scripted"
            if e.dtype == torch.complex32:  # no comparison kernels: compared as (real, imaginary) pairs
                e, s = torch.view_as_real(e.detach()), torch.view_as_real(s.detach())
            if exact:
                same = torch.equal(e, s) or (
                    e.is_floating_point() or e.is_complex()
                ) and bool(((e == s) | (e.isnan() & s.isnan())).all())
                assert same, f"{what}[{i}]: values differ (max abs diff {(e.double() - s.double()).abs().max() if not e.is_complex() else 'complex'})"
            else:
                if atol_of_max and e.numel() and (e.is_floating_point() or e.is_complex()):
                    largest = float(e.detach().abs().nan_to_num(nan=0.0, posinf=0.0).max())
                    atol = max(atol or 0.0, atol_of_max * largest)
                torch.testing.assert_close(s, e, rtol=rtol, atol=atol, equal_nan=True,
                                           msg=lambda m: f"{what}[{i}]: {m}")
        else:
            assert type(e) is type(s) and e == s, f"{what}[{i}]: {e!r} eager, {s!r} scripted"


def clone_args(args: Sequence[Any], requires_grad: bool) -> list:
    """Fresh copies of the tensors in `args` (and in lists of tensors), each
    side's own; floating and complex ones require grad where asked."""
    out = []
    for a in args:
        if isinstance(a, torch.Tensor):
            c = a.detach().clone()
            if requires_grad and (c.is_floating_point() or c.is_complex()):
                c.requires_grad_(True)
            out.append(c)
        elif isinstance(a, list) and a and isinstance(a[0], torch.Tensor):
            out.append(clone_args(a, requires_grad))
        else:
            out.append(a)
    return out


def _grad_leaves(args: Iterable[Any]) -> list:
    """The tensors in `args` (and in lists) that require grad, in order."""
    leaves = []
    for a in args:
        if isinstance(a, torch.Tensor) and a.requires_grad:
            leaves.append(a)
        elif isinstance(a, list):
            leaves.extend(_grad_leaves(a))
    return leaves


def run_side(fn: Callable, args: Sequence[Any], outer: Callable[[], Any] | None,
             grad: bool) -> tuple[Any, BaseException | None, list, tuple]:
    """One side of a comparison: calls `fn` on clone_args(args) inside
    `outer()` (and, with grad, backward of the sum of its outputs that
    require grad). Returns (result, the error raised or None, the leaves'
    gradients, autocast_state() at the end of the call, inside `outer`)."""
    call_args = clone_args(args, grad)
    result, error, grads = None, None, []
    context = outer() if outer is not None else contextlib.nullcontext()
    with context:
        try:
            result = fn(*call_args)
            if grad:
                leaves = _grad_leaves(call_args)
                outs = [t for t in flatten(result)
                        if isinstance(t, torch.Tensor) and t.requires_grad]
                if outs and leaves:
                    total = sum(o.float().sum() for o in outs)
                    total.backward()
                    grads = [leaf.grad for leaf in leaves]
        except Exception as exc:  # compared with the other side below
            error = exc
        state_inside = autocast_state()
    return result, error, grads, state_inside


_INTERPRETER_ERROR = "The following operation failed in the TorchScript interpreter.\n"
# The line after a scripted traceback that names the error: `NAME: MESSAGE`.
# Traceback lines never match: frames are indented, source lines at column 0
# are `def ...(`, headers have spaces before their colon.
_ERROR_LINE = re.compile(r"^([A-Za-z_][\w.]*): ", re.MULTILINE)


def unwrap_torchscript_error(message: str) -> tuple[str | None, str]:
    """(NAME of the innermost `NAME: MESSAGE` line, or None when the message
    is not the interpreter's; MESSAGE without the interpreter's layers)."""
    name = None
    while message.startswith(_INTERPRETER_ERROR):
        line = _ERROR_LINE.search(message, len(_INTERPRETER_ERROR))
        if line is None:
            break
        name, message = line.group(1), message[line.end():]
    return name, message.rstrip("\n")


def _qualified_name(cls: type) -> str:
    """"builtins.ValueError": how a scripted `raise` names its class."""
    return f"{cls.__module__}.{cls.__qualname__}"


def assert_same_error(eager: BaseException, scripted: BaseException, where: str = "error") -> None:
    """The rule in the module docstring: same class, same non-empty message."""
    detail = f"\neager raised {eager!r}\nscripted raised {scripted!r}"
    eager_message = str(eager).rstrip("\n")
    assert eager_message.strip(), (
        f"{where}: eager raised {type(eager).__name__} with an empty message, "
        f"which cannot be compared; raise it with a message{detail}")
    name, message = unwrap_torchscript_error(str(scripted))
    if name is not None and "." in name:  # a TorchScript `raise` statement
        assert name == _qualified_name(type(eager)), f"{where}: scripted raised {name}, eager {_qualified_name(type(eager))}{detail}"
        assert type(scripted) in (torch.jit.Error, RuntimeError), (
            f"{where}: a scripted `raise` surfaced as {_qualified_name(type(scripted))}{detail}")
    else:
        assert type(scripted) is type(eager), (
            f"{where}: scripted raised {_qualified_name(type(scripted))}, eager {_qualified_name(type(eager))}{detail}")
    assert message == eager_message, f"{where}: messages differ{detail}"


def check_against_eager(
    fn: Callable,
    args: Sequence[Any],
    *,
    scripted: Any = None,
    outer: Callable[[], Any] | None = None,
    calls: Sequence[int] = CALLS,
    exact: bool = True,
    grad: bool = False,
    rtol: float | None = None,
    atol: float | None = None,
    args_for_call: Callable[[int], Sequence[Any]] | None = None,
    grad_exact: bool | None = None,
    grad_atol_of_max: float = 0.0,
) -> Any:
    """Compare `fn` eagerly with its jitamp-scripted version.

    outer: a zero-argument factory of a context manager (e.g. an eager
    autocast) that wraps both calls. args_for_call(i) gives the arguments of
    call i (to alternate flags between calls); default `args`. grad_exact:
    compare gradients bitwise (default: as `exact`), else with rtol/atol
    (and grad_atol_of_max, see assert_same's atol_of_max).
    Returns the scripted object.
    """
    if scripted is None:
        scripted = script(fn)
    before = autocast_state()
    last = max(calls)
    for i in range(1, last + 1):
        call_args = args_for_call(i) if args_for_call is not None else args
        e_res, e_err, e_grads, e_state = run_side(fn, call_args, outer, grad)
        assert autocast_state() == before, "eager changed the autocast state"
        s_res, s_err, s_grads, s_state = run_side(scripted, call_args, outer, grad)
        after = autocast_state()
        if i not in calls:
            continue
        where = f"call {i}"
        assert after == before, f"{where}: autocast state after the scripted call is {after}, was {before}"
        assert s_state == e_state, f"{where}: autocast state at the end of the call {s_state} scripted, {e_state} eager"
        if e_err is not None or s_err is not None:
            assert e_err is not None, f"{where}: scripted raised {s_err!r}, eager returned"
            assert s_err is not None, f"{where}: eager raised {e_err!r}, scripted returned"
            assert_same_error(e_err, s_err, where)
            continue
        assert_same(e_res, s_res, exact=exact, what=f"{where} output", rtol=rtol, atol=atol)
        if grad:
            assert len(e_grads) == len(s_grads), f"{where}: {len(e_grads)} gradients eager, {len(s_grads)} scripted"
            for k, (ge, gs) in enumerate(zip(e_grads, s_grads)):
                assert (ge is None) == (gs is None), f"{where}: grad[{k}] None on one side"
                if ge is not None:
                    assert_same(ge, gs, exact=exact if grad_exact is None else grad_exact,
                                what=f"{where} grad[{k}]", rtol=rtol, atol=atol,
                                atol_of_max=grad_atol_of_max)
    return scripted


def cpu_autocast(dtype: torch.dtype = torch.bfloat16, enabled: bool = True) -> Callable[[], Any]:
    """An `outer` factory for check_against_eager: an eager CPU autocast
    region of `dtype` (a disabled one with enabled=False)."""
    return lambda: torch.autocast("cpu", dtype=dtype, enabled=enabled)


def no_grad_under(outer: Callable[[], Any] | None,
                  mode: Callable[[], Any] = torch.no_grad) -> Callable[[], Any]:
    """An `outer` factory for check_against_eager: torch.no_grad() (or
    `mode`, e.g. torch.inference_mode) around the eager region `outer`
    makes (or alone, for None)."""
    def make():
        stack = contextlib.ExitStack()
        stack.enter_context(mode())
        if outer is not None:
            stack.enter_context(outer())
        return stack
    return make
