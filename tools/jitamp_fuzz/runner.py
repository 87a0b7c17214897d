"""Runs one generated program eagerly and scripted with jitamp, and compares.

A program's source is written to a file and imported (TorchScript reads the
source with `inspect.getsource`), under a module name unique to the run, so
that TorchScript's caches (compiled functions by Python object, compilation
units by qualified name) never hand one run's compilation to another.

The comparison is `jitamp.testing.check_against_eager`, the tests' own
rules, on calls 1, 2, 3 (ALTERNATE programs flip their `flag` argument
between calls), with gradients when the program says GRAD, inside the eager
region OUTER; then, for SAVE programs (functions and modules without
`@torch.jit.ignore` calls), once more on the model saved with `torch.jit.save` and loaded with
`torch.jit.load` (jitamp imported). Module programs are then frozen
(`torch.jit.freeze` of the scripted module in eval mode: jitamp folds the
casts of weights whose scope's state is static) and compared with eager
under `torch.no_grad()` inside OUTER, as a frozen model serves (SAVE
programs: also after save and load), and so is
`torch.jit.optimize_for_inference` of it; where
`jitamp.freeze(standalone=True)` accepts the module (no jitamp op left) and
OUTER leaves autocast off (the callers it is exact for), that model too,
then saved and loaded by `torch.jit.load` to run on TorchScript's stock
executor (the default profiling executor: no jitamp plan), as a stock
LibTorch runs it. THREADS programs are also called from two threads at
once (before save/load), each comparing in its own eager region (OUTER,
THREADS[0]).

Outcomes (`Result.kind`):
- "ok";
- "reject": the program does not script even without jitamp (a generator
  bug); "script": it scripts without jitamp but not with it (a jitamp bug);
- "mismatch:<what>": the oracle's AssertionError, by what differs (dtype,
  value, shape, structure, error, grad, state), "saved-mismatch:<what>" after
  save/load, "frozen-mismatch:<what>" / "standalone-mismatch:<what>" frozen,
  "stock-mismatch:<what>" the standalone model on the stock executor,
  "frozen-saved-mismatch:<what>" the frozen model saved and loaded,
  "optimized-mismatch:<what>" optimize_for_inference's model,
  "threads-mismatch:<what>" a thread's comparison;
- "freeze" / "optimize": torch.jit.freeze / optimize_for_inference raises
  on the module scripted with jitamp and not on the module scripted
  without it;
- "add-autocast-mismatch:<what>" / "add-autocast": ADD_AUTOCAST module
  programs, scripted without jitamp and given autocast by
  `jitamp.add_autocast("cpu", ADD_AUTOCAST)`, against eager inside
  `torch.autocast("cpu", dtype=ADD_AUTOCAST)` (add_autocast raised);
- "known:<what>": a difference TorchScript itself makes, with or without
  jitamp (`known_difference`, `_known_finding`);
- "harness": anything else that went wrong while comparing (a fuzzer bug).
"""
from __future__ import annotations

import ast
import builtins
import contextlib
import copy
import importlib.util
import inspect
import io
import os
import re
import sys
import threading
import tokenize
import traceback
import types
import warnings
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

import jitamp
import jitamp.testing as oracle
from jitamp import _patches
from jitamp.passes import graph_nodes

CALLS = (1, 2, 3)

@dataclass
class Result:
    kind: str
    message: str = ""
    eager_raised: bool = False
    details: dict = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return self.kind not in ("ok", "reject") and not self.kind.startswith("refused:")

    @property
    def category(self) -> str:
        """What the shrinker keeps: the kind, and for errors the classes."""
        return self.kind


_counter = [0]


def load_source(source: str, directory: str, stem: str) -> Any:
    """Imports `source` as a fresh module (file `directory/stem_N.py`)."""
    _counter[0] += 1
    name = f"{stem}_{os.getpid()}_{_counter[0]}"
    path = os.path.join(directory, name + ".py")
    with open(path, "w") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def code_of(source: str) -> str:
    """`source` without its comments: what the runner asks of a program's
    text (does it fork, use autocast, ...) is asked of its code, not of a
    reproducer's notes about it."""
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline)
                  if t.type != tokenize.COMMENT]
        return tokenize.untokenize(tokens)
    except (tokenize.TokenError, SyntaxError):
        return source


def unload(module: Any) -> None:
    sys.modules.pop(module.__name__, None)
    with contextlib.suppress(OSError):
        os.remove(module.__file__)


@contextlib.contextmanager
def jitamp_enabled(on: bool, profiling_executor: bool = False):
    """jitamp enabled (scripting for `profiling_executor`) or disabled
    inside; as before after (enabled for the simple executor, or not)."""
    was = jitamp.is_enabled()
    if was and (not on or profiling_executor):
        jitamp.disable()
    if on and not jitamp.is_enabled():
        jitamp.enable(profiling_executor=profiling_executor)
    try:
        yield
    finally:
        if jitamp.is_enabled() and (not was or profiling_executor):
            jitamp.disable()
        if was and not jitamp.is_enabled():
            jitamp.enable()


def _scripted_for_profiling(source: str) -> bool:
    """_profiling of a program's source, before it is imported (with jitamp
    enabled as it says)."""
    return "\nEXECUTOR = 'profiling'\n" in source


def _profiling(module: Any) -> bool:
    """Whether the program is scripted with jitamp.enable(profiling_executor=True)
    (EXECUTOR; reproducers from before it have none)."""
    return getattr(module, "EXECUTOR", "simple") == "profiling"


@contextlib.contextmanager
def scripted_without_jitamp(source: str, directory: str, stem: str):
    """The program imported afresh with jitamp disabled, and its build()
    scripted: yields (module, scripted), jitamp still disabled; unloads the
    module after."""
    plain = None
    try:
        with jitamp_enabled(False):
            plain = load_source(source, directory, stem)
            yield plain, torch.jit.script(plain.build())
    finally:
        if plain is not None:
            unload(plain)


def make_outer(spec: Any):
    if spec is None:
        return None
    if spec == "no_grad":
        return torch.no_grad
    if spec == "inference_mode":
        return torch.inference_mode
    device, dtype, enabled = spec
    return lambda: torch.autocast(device, dtype=getattr(torch, dtype), enabled=enabled)


_WHAT = [
    ("raised", "error"),
    ("messages differ", "error"),
    ("eager returned", "error"),
    ("autocast state", "state"),
    ("grad", "grad"),
    ("dtype", "dtype"),
    ("shape", "shape"),
    ("device", "device"),
    ("values differ", "value"),
    ("not close", "value"),
    ("values eager", "structure"),
    ("tensor eager", "structure"),
]


def classify(message: str) -> str:
    head = message.split("\n", 1)[0]
    for needle, what in _WHAT:
        if needle in head:
            return what
    return "other"


def _unwrapping_callee_errors(fn):
    """Eager code that calls a `@torch.jit.script` callee gets TorchScript's
    interpreter error around the callee's error; the scripted side's error
    is unwrapped by the oracle's rule, so unwrap eager's the same way (a
    TorchScript rewording, not jitamp's). A callee's `raise` (NAME
    "builtins.X", jitamp's raises where eager binds `as` names to None
    included) is given back its Python class, as if the callee were Python."""
    def eager(*args):
        try:
            return fn(*args)
        except Exception as exc:
            name, message = oracle.unwrap_torchscript_error(str(exc))
            if name is None:
                raise
            module, _, qualname = name.rpartition(".")
            cls = getattr(builtins, qualname, None) if module == "builtins" else None
            if isinstance(cls, type) and issubclass(cls, Exception):
                raise cls(message) from exc
            raise type(exc)(message) from exc
    return eager


_IGNORED_PYTHON_ERROR = re.compile(r"(?s)^(\w+): (.*?)\n\nAt:\n")


def _unwrapping_ignored_errors(scripted):
    """A Python exception raised in a `@torch.jit.ignore` function reaches
    scripted callers as RuntimeError "NAME: MESSAGE\n\nAt:\n<frames>" (a
    TorchScript rewording, jitamp.testing's docstring): give it back its
    message (and RuntimeError class, which eager's op errors have)."""
    def call(*args):
        try:
            return scripted(*args)
        except RuntimeError as exc:
            _, message = oracle.unwrap_torchscript_error(str(exc))
            m = _IGNORED_PYTHON_ERROR.match(message)
            cls = getattr(builtins, m.group(1), None) if m is not None else None
            if not (isinstance(cls, type) and issubclass(cls, Exception)):
                raise
            raise cls(m.group(2)) from exc
    return call


_OUTER = object()  # _compare's region: the program's OUTER


def _compare(fn, scripted, module, features=(), *, frozen: bool = False, region: Any = _OUTER,
             grad: bool = True) -> None:
    # Gradients of programs that fork: TorchScript runs a forked task on
    # another thread, whose autograd nodes get that thread's sequence
    # numbers, so the backward pass sums gradient contributions in another
    # order (seen without jitamp too): compared with assert_close's
    # tolerance for the dtype. Everything else: bitwise. A frozen model
    # (frozen=True) serves: under torch.no_grad() inside OUTER, no gradients.
    # The profiling executor's symbolic autodiff sums the gradient of a
    # value read by several ops of one differentiable subgraph in its own
    # order (docs/executors.md, "Symbolic autodiff"): compared the same way.
    fork = "torch.jit.fork" in module.SOURCE
    ignore = "@torch.jit.ignore" in module.SOURCE
    outer = make_outer(module.OUTER if region is _OUTER else region)
    oracle.check_against_eager(
        _unwrapping_callee_errors(fn), module.make_args(1),
        scripted=_unwrapping_ignored_errors(scripted) if ignore else scripted,
        outer=oracle.no_grad_under(outer) if frozen else outer, calls=CALLS,
        grad=grad and module.GRAD and not frozen, args_for_call=module.make_args,
        grad_exact=not (fork or _profiling(module)),
        **(_profiling_tolerance(module) if _profiling(module) else {}))


def _compare_in_threads(obj, scripted, module) -> None:
    """Two threads call the program at once, as a server's workers call a
    model: one inside OUTER, the other inside THREADS[0]; each compares the
    scripted program with eager in its own thread (autocast state is per
    thread). Without gradients: eager's cast cache is one for all threads,
    and each thread's outermost region exit clears it, so a leaf's casts in
    one call are one cached copy or two, as the other thread's timing has
    it, and the gradient through them is summed in another order (seen:
    seed 20261123, index 100, 0.0156 off in bfloat16). Values are the same
    either way. Raises the first thread's AssertionError, naming its
    region."""
    regions = [module.OUTER, module.THREADS[0]]
    failures: list = [None, None]
    start = threading.Barrier(2)

    def work(i: int) -> None:
        try:
            start.wait()
            _compare(obj, scripted, module, region=regions[i], grad=False)
        except BaseException as exc:  # re-raised in the calling thread
            failures[i] = exc
        finally:
            oracle.reset_autocast_state()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, exc in enumerate(failures):
        if isinstance(exc, AssertionError):
            raise ThreadMismatch(i, regions[i], exc)
        if exc is not None:
            raise exc


class ThreadMismatch(AssertionError):
    """A difference one of _compare_in_threads's threads met (its oracle
    error is the cause), naming the thread and its eager region."""

    def __init__(self, thread: int, region: Any, cause: AssertionError):
        super().__init__(f"{cause}\n(in thread {thread} of 2, eager region {region!r})")
        self.thread, self.region = thread, region
        self.__cause__ = cause


def _alone_in_its_region(source: str, message: str, region: Any, directory: str,
                         stem: str) -> str | None:
    """The known class of a thread's difference (the oracle's `message`)
    that the program shows called alone, in that thread's `region` and
    without gradients (as the threads call it), where the same first line
    says it is the same difference; else None. (Seed 271127, index 11376:
    the thread without autocast meets the profiling plan's error order,
    plain TorchScript's too, which a single-thread run in that region
    recognizes.) Only for a region that leaves autocast off: where it is
    on, what only the thread meets stays a threads-mismatch, as what a
    per-thread autocast state may get wrong
    (tests/test_fuzz.py::test_runner_reports_a_difference_only_a_second_thread_meets)."""
    if not _autocast_off(region):
        return None
    harness = {"OUTER": repr(region), "THREADS": "()", "GRAD": "False"}
    for name, value in harness.items():
        source = re.sub(rf"^{name} = .*$", f"{name} = {value}", source, count=1, flags=re.M)
    alone = run_source(source, directory, stem + "_alone")
    same = message.splitlines()[0] in alone.message
    return alone.kind if alone.kind.startswith("known:") and same else None


def _profiling_tolerance(module: Any) -> dict:
    """How far a gradient of the profiling executor may be from eager's:
    summed in another order, off by a few roundings of the dtype the terms
    were summed in. Where a lower precision may be anywhere (a scope, the
    eager region, an input or dtype of the program), that is bfloat16's
    (2**-8 of each term, and terms may cancel: 0.11 seen on a 0.7 gradient
    of three terms, 4.0 on a -28 gradient whose terms were thousands, as
    its tensor's largest element, 26793: seed 215, index 4581); else
    float32's."""
    low = re.search(r"autocast|bfloat16|float16", module.SOURCE)
    return ({"rtol": 0.1, "atol": 0.25, "grad_atol_of_max": 2**-5} if low
            else {"rtol": 1e-4, "atol": 1e-4})


def _autocast_off(outer: Any) -> bool:
    """Whether the eager region OUTER leaves CPU autocast off."""
    return outer is None or outer in ("no_grad", "inference_mode") or outer[2] is False


def _compare_frozen(obj, scripted, module, source, directory, stem,
                    save: bool = False) -> tuple[str, str] | None:
    """The module frozen, against eager in eval mode under torch.no_grad()
    (inside OUTER), and where `save`, the frozen model saved and loaded by
    torch.jit.load (its jitamp loader configures it); then the standalone
    freeze where it applies. Returns (kind, message) of the first failure,
    else None. Leaves obj in eval mode (the last comparison)."""
    obj.eval()
    scripted.eval()
    frozen = _made_unless_torchscript_refuses(torch.jit.freeze, scripted, source, directory, stem)
    if not isinstance(frozen, torch.jit.ScriptModule):
        return frozen and ("freeze", frozen)
    failed = _compare_inference_model(obj, frozen, module, source, directory, stem, "frozen")
    if failed is not None:
        return failed
    # torch.jit.optimize_for_inference: freezing, then TorchScript's
    # inference passes (jitamp folds after them, docs/frozen.md)
    optimized = _made_unless_torchscript_refuses(torch.jit.optimize_for_inference, scripted, source,
                                                 directory, stem)
    if not isinstance(optimized, torch.jit.ScriptModule):
        return optimized and ("optimize", optimized)
    failed = _compare_inference_model(obj, optimized, module, source, directory, stem, "optimized")
    if failed is not None:
        return failed
    # loading compiles the methods again (constant pooling: fuzz seed 2602,
    # index 2667), then the loader rewrites them
    if save and (failed := _compare_inference_model(obj, _saved_and_loaded(frozen), module, source,
                                                    directory, stem, "frozen-saved", saved=frozen)):
        return failed
    if not _autocast_off(module.OUTER):
        return None
    try:
        # for the profiling executor: what a stock torch.jit.load runs
        standalone = jitamp.freeze(scripted, standalone=True, profiling_executor=_profiling(module))
    except ValueError:
        return None  # an op or scope that needs jitamp: it says which
    return (_compare_inference_model(obj, standalone, module, source, directory, stem, "standalone")
            or _compare_inference_model(obj, _saved_and_loaded(standalone), module, source, directory,
                                        stem, "stock", saved=standalone))


def _made_unless_torchscript_refuses(make, scripted, source, directory, stem) -> Any:
    """make(scripted) (torch.jit.freeze, optimize_for_inference); where it
    raises, the error's message, or None where make refuses the module
    scripted without jitamp too (TorchScript's own limit)."""
    try:
        return make(scripted)
    except Exception as exc:
        message = f"{type(exc).__name__}: {exc}"
    try:
        with scripted_without_jitamp(source, directory, stem + "_plain_make") as (_, plain):
            make(plain.eval())
    except Exception:
        return None
    return message


# How plain TorchScript makes each kind of inference model of a module.
_PLAIN_MODEL: dict[str, Callable[[Any], Any]] = {
    "frozen": lambda plain: torch.jit.freeze(plain),
    "standalone": lambda plain: torch.jit.freeze(plain),
    "optimized": lambda plain: torch.jit.optimize_for_inference(plain),
    "frozen-saved": lambda plain: _saved_and_loaded(torch.jit.freeze(plain)),
    "stock": lambda plain: _saved_and_loaded(torch.jit.freeze(plain)),
}


def _compare_inference_model(obj, model, module, source, directory, stem,
                             what: str, saved: Any = None) -> tuple[str, str] | None:
    """An inference `model` against eager under torch.no_grad() inside
    OUTER: (kind, message) of a difference, classified, else None. `what`:
    "frozen" (torch.jit.freeze), "optimized" (optimize_for_inference),
    "frozen-saved" (frozen, saved and loaded), "standalone"
    (jitamp.freeze(standalone=True)), "stock" (that, saved and loaded: the
    stock executor runs it); `saved`: the model that was saved, for the
    last two. Eager's error from an op whose result only
    code after a raise reads, which a loaded standalone model drops (its
    scopes gone, the raise's condition folded), is dead code too (seed
    112805, index 3115)."""
    try:
        _compare(obj, model, module, frozen=True)
    except AssertionError as exc:
        # (TorchScript's own, as unfrozen: seed 217, index 2683, a TypeError
        # of cat's out= dtype check re-raised as RuntimeError under no_grad)
        kind = known_difference(str(exc), _profiling(module)) or f"{what}-mismatch:" + classify(str(exc))
        # eager's error from dead code: the frozen model returns, or raises
        # another error further on (seed 1140, index 4137: a dtype error
        # of a later addmm that eager never reached; seed 2701, index 215:
        # a NotImplementedError of a later layer_norm, eager's error from a
        # dead mm in a forked callee)
        if (kind == f"{what}-mismatch:error" and _raised_past(str(exc))
                and _raises_in_dead_code(obj, module, source, directory, stem, model, saved)):
            kind = "known:dead-code"
        elif kind.startswith(f"{what}-mismatch:") and (
                _plain_torchscript_differs(obj, module, source, directory, stem, kind, frozen=True,
                                           make=_PLAIN_MODEL[what])
                or kind == f"{what}-mismatch:error" and ": messages differ" in str(exc)
                and _plain_words_it_so(obj, module, source, directory, stem, str(exc), _PLAIN_MODEL[what])):
            kind = f"known:{what}-plain-torchscript"
        elif kind.startswith(f"{what}-mismatch:") and _frozen_equals_eager_uncached(obj, model, module):
            kind = "known:frozen-cast-cache"
        elif kind.startswith(f"{what}-mismatch:") and _frozen_equals_eager_of_constant_weights(obj, model, module):
            kind = "known:frozen-constant-weights"
        return kind, str(exc)
    return None


def _compare_add_autocast(obj, module, source, directory, stem) -> tuple[str, str] | None:
    """The module scripted without jitamp, given autocast by
    jitamp.add_autocast("cpu", ADD_AUTOCAST), against eager calling it inside
    `torch.autocast("cpu", dtype=ADD_AUTOCAST)` (inside OUTER, as every
    comparison). Returns (kind, message) of a failure, or None."""
    dtype = getattr(torch, module.ADD_AUTOCAST)

    def eager_under_autocast(*args):
        with torch.autocast("cpu", dtype=dtype):
            return obj(*args)

    with contextlib.ExitStack() as stack:
        try:
            _, plain = stack.enter_context(scripted_without_jitamp(source, directory, stem + "_add_autocast"))
        except Exception:  # TorchScript alone refuses it (jitamp-only syntax): nothing to add autocast to
            return None
        try:
            jitamp.add_autocast(plain, "cpu", dtype, profiling_executor=_profiling(module))
        except Exception as exc:
            return "add-autocast", f"{type(exc).__name__}: {exc}"
        try:
            with jitamp_enabled(module.RUNTIME_JITAMP):
                _compare(eager_under_autocast, plain, module)
        except AssertionError as exc:
            kind = known_difference(str(exc), _profiling(module)) or "add-autocast-mismatch:" + classify(str(exc))
            if _fork_order_only(kind, module, source, directory, stem, str(exc)):
                kind = "known:fork-grad-order"  # (seed 112804, index 3834)
            kind = _profiling_plans_own(kind, module, source, directory, stem, str(exc)) or kind
            return kind, str(exc)
    return None


_UNCACHED = "eager with its cast cache off, as a frozen model's constants are never served from it"


def _frozen_equals_eager_uncached(obj, frozen, module) -> bool:
    """Whether the frozen model equals eager with eager's cast cache off
    (eager called with the cache flag off, and its scopes entered with it
    off, whatever they ask). Eager's cache serves leaves that
    require grad; a frozen model's weights are constants, which it never
    serves: where eager's module hands a scope of one dtype a weight's cast
    made under another (a scope nested in a region of another dtype, or
    after a scope of another dtype in one region), the frozen model casts
    afresh (docs/runtime-model.md, "The cast cache"). The frozen model's own
    scopes run as they do. Eager's queries of the flag
    (torch.is_autocast_cache_enabled, also in autocast.__init__) answer what
    the program asked for, as the frozen model's scopes set it."""
    autocast = torch.amp.autocast_mode.autocast
    enter, leave, query = autocast.__enter__, autocast.__exit__, torch.is_autocast_cache_enabled
    was = query()
    asked: list[bool] = [was]  # the flag of the caller (the frozen side's) and of each open eager scope

    def enter_uncached(self):
        asked.append(self._cache_enabled)
        self._cache_enabled = False
        flag = query()  # the real one, which __exit__ restores
        entered = enter(self)
        self.prev_cache_enabled = flag
        return entered

    def leave_uncached(self, *exc):
        asked.pop()
        return leave(self, *exc)

    def eager_uncached(*args):
        asked[0] = query()
        torch.set_autocast_cache_enabled(False)
        patches = _patches.Installed([
            _patches.Replace(autocast, "__enter__", lambda _: enter_uncached, because=_UNCACHED),
            _patches.Replace(autocast, "__exit__", lambda _: leave_uncached, because=_UNCACHED),
            _patches.Replace(torch, "is_autocast_cache_enabled", lambda _: lambda: asked[-1], because=_UNCACHED),
        ])
        try:
            return obj(*args)
        finally:
            patches.uninstall()
            torch.set_autocast_cache_enabled(asked[0])
            del asked[1:]
    # The frozen model called with the flag as the caller set it, or off
    # too: its own scopes' casts of constants never use the cache, but a
    # scope that does not say (cache_enabled=None) takes the caller's flag,
    # which its queries read (either may be what eager's uncached run is).
    for frozen_flag in (was, False):
        torch.set_autocast_cache_enabled(frozen_flag)
        try:
            if _equal_or_known(eager_uncached, frozen, module):
                return True
        finally:
            torch.set_autocast_cache_enabled(was)
    return False


def _frozen_equals_eager_of_constant_weights(obj, frozen, module) -> bool:
    """Whether the frozen model equals eager whose parameters do not require
    grad: a frozen model's weights are constants, and an op whose kernel
    takes another path for a weight that requires grad raises another
    message (matmul folds a float16 batch times a float32 weight into an mm
    only for such a weight: seed 112807, index 66799; plain TorchScript,
    test_fuzz_regressions.py::test_frozen_matmul_of_a_weight_raises_another_message_in_plain_torchscript)."""
    if not isinstance(obj, torch.nn.Module):
        return False
    try:
        constant = copy.deepcopy(obj)
    except Exception:  # an attribute deepcopy refuses: no answer
        return False
    for name, parameter in constant.named_parameters():
        if not _kept_by(frozen, name):
            parameter.requires_grad_(False)
    return _equal_or_known(constant, frozen, module)


def _kept_by(frozen, name: str) -> bool:
    """Whether the frozen model still holds parameter `name` (dotted) as an
    attribute: freezing folds a parameter into a constant only where alias
    analysis finds nothing may write it (a tensor in a list or object that
    the program writes may be it: plain TorchScript too); one kept stays a
    leaf that requires grad, which the cast cache serves as eager's (seed
    112903, indices 36893 and 43125)."""
    target = frozen._c
    for part in name.split("."):
        if not target.hasattr(part):
            return False
        target = target.getattr(part)
    return isinstance(target, torch.Tensor)


def _equal_or_known(reference, frozen, module) -> bool:
    """Whether the frozen model compares equal to `reference` (an eager
    variant), or differs from it only as TorchScript does (known_difference:
    an assert's torch.jit.Error where Python raises AssertionError; seed
    112901, index 20237)."""
    try:
        _compare(reference, frozen, module, frozen=True)
        return True
    except AssertionError as exc:
        return known_difference(str(exc), _profiling(module)) is not None


def _saved_and_loaded(model: Any) -> Any:
    """`model` saved with torch.jit.save and loaded by torch.jit.load (jitamp
    imported): a model jitamp rewrote runs as its loader object configures
    it; one without that object (a standalone model, plain TorchScript's)
    runs on TorchScript's stock executor, from the graphs as saved."""
    buffer = io.BytesIO()
    torch.jit.save(model, buffer)
    buffer.seek(0)
    return torch.jit.load(buffer)


# Nodes whose only effect is their outputs (TorchScript's dead code
# elimination removes them when nothing reads those); any other node counts
# as having effects (the check errs toward "live").
_PURE_PRIM = frozenset(
    "prim::" + k for k in (
        "Constant", "ListConstruct", "ListUnpack", "TupleConstruct", "TupleUnpack",
        "TupleIndex", "DictConstruct", "GetAttr", "If", "Loop", "unchecked_cast",
        "NumToTensor", "dtype", "device", "layout", "requires_grad", "shape",
        "is_cuda", "min", "max", "isinstance", "Uninitialized", "__isnot__", "__is__"))
_LINE = re.compile(r'File "([^"]+)", line (\d+)')
# autograd's check of a gradient against its input: a complex gradient for a
# real input (or the reverse)
_REAL_GRAD_OF_COMPLEX = "input_is_complex == grad_is_complex"


def _op_kind(node: torch._C.Node) -> str:
    """The node's kind; for a `jitamp::direct_call` of the simple
    executor's plan, the op it calls (ops/direct_call.h)."""
    kind = node.kind()
    return node.s("op").split(".")[0] if kind == "jitamp::direct_call" else kind


def _pure(node: torch._C.Node) -> bool:
    kind = _op_kind(node)
    if kind in _PURE_PRIM:
        return True
    if not kind.startswith("aten::") or kind == "aten::warn":  # (a side effect)
        return False
    try:
        if node.kind() == "jitamp::direct_call":
            name, _, overload = node.s("op").partition(".")
            schema = torch._C._get_schema(name, overload)
        else:
            schema = torch._C.parse_schema(node.schema())
    except RuntimeError:  # no schema
        return False
    return not any(a.alias_info is not None and a.alias_info.is_write for a in schema.arguments)


def _inlined(graph: torch._C.Graph) -> torch._C.Graph:
    """A copy of `graph` with TorchScript's Inline pass run on it, PyTorch's
    built-in JIT autocast off: Inline reads each callee's optimized graph,
    made then, and the built-in pass refuses a scope whose `enabled` is no constant
    ("Autocast _enabled argument must be a constant"; seed 2701, index
    215: a scripted helper of the program scripted without jitamp). The
    graphs inlined here are read, never run."""
    graph = graph.copy()
    previous = torch._C._jit_set_autocast_mode(False)
    try:
        torch._C._jit_pass_inline(graph)
    finally:
        torch._C._jit_set_autocast_mode(previous)
    return graph


def _writes_a_fresh_object(node: torch._C.Node) -> bool:
    return node.kind() == "prim::SetAttr" and node.inputsAt(0).node().kind() == "prim::CreateObject"


def _live_lines(graph: torch._C.Graph) -> dict[tuple[str, int], bool]:
    """For each (file, line) that nodes of `graph` (callees inlined) come
    from, constants aside: whether one of them is live, i.e. is not pure or
    has an output that the graph's result or a live node reads
    (TorchScript's dead code elimination keeps it)."""
    nodes = graph_nodes(graph)
    # (pybind gives back the wrapper `nodes` holds for a node: one object each)
    live: set = set()
    # an attribute write of an object the graph makes lives with the object
    # (dead code elimination drops both where nothing reads it: seed
    # 112903, index 29408, a Pair built in an `if` nothing else needs)
    work = [n for n in nodes
            if not _pure(n) and n.kind() != "prim::CreateObject" and not _writes_a_fresh_object(n)]
    work.append(graph.return_node())

    def enclosing(node):
        block = node.owningBlock()
        while block is not None and block.owningNode() is not None:
            node = block.owningNode()
            yield node
            block = node.owningBlock()
    while work:
        node = work.pop()
        if node in live:
            continue
        live.add(node)
        work.extend(enclosing(node))
        for value in node.inputs():
            work.append(value.node())  # a block's parameter: its owner
        if node.kind() == "prim::CreateObject":
            work.extend(use.user for use in node.output().uses() if use.user.kind() == "prim::SetAttr")
        for sub in node.blocks():  # what a live if or loop returns
            work.append(sub.returnNode())
    lines: dict[tuple[str, int], bool] = {}
    for node in nodes:
        if node.kind() == "prim::Constant":
            continue  # pooled: a constant of a dead line may serve a live one
        found = _LINE.match(node.sourceRange().strip())
        if found:
            where = (found.group(1), int(found.group(2)))
            lines[where] = lines.get(where, False) or node in live
    return lines


def _raising_line(obj, module) -> tuple[str, int] | None:
    """The (file, line) where eager, as the frozen comparison calls it,
    raises: the innermost frame of TorchScript's traceback of a scripted
    callee's error (a library function it calls included: the op that
    raised, not the program line calling F.layer_norm, whose argument checks
    stay live), else the innermost Python frame of the program's file; None
    if eager returns."""
    outer = oracle.no_grad_under(make_outer(module.OUTER))
    for call in CALLS:
        try:
            with outer():
                obj(*module.make_args(call))
        except Exception as exc:
            path = module.__file__
            in_script = [(m.group(1), int(m.group(2))) for m in _LINE.finditer(str(exc))]
            if any(where[0] == path for where in in_script):
                return in_script[-1]
            frames = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename == path]
            return (path, frames[-1]) if frames else None
        finally:
            oracle.reset_autocast_state()
    return None


def _raises_in_dead_code(obj, module, source, directory, stem, frozen=None, saved=None) -> bool:
    """Whether eager's error, which a frozen model does not raise, comes from
    a line all of whose ops are dead code in the program scripted without
    jitamp: TorchScript removes an op nothing reads (plain TorchScript and
    torch.jit.freeze alike, tests/test_fuzz_regressions.py), so it never
    raises there, with or without jitamp (fuzz finding 14). Or from a line
    of which the `frozen` model has no node left: freezing simplified away
    what kept it (finding 15: `l1_loss(v, v)`'s size check, a warning that
    read `v`, folded once both sizes are one value's), or has fewer of its
    ops than the program has where its callees are inlined: freezing folded
    a condition of one call of a callee and dropped the ops only the branch
    not taken read (seed 112807, index 41946: a scripted helper called with
    a weight, whose `if` on the weight's sum is a constant once frozen). Where plain
    TorchScript cannot script the program (an `@torch.autocast` helper, an
    early return before a scope), its scope-free twin tells, whose lines are
    the program's (seed 112804, index 4835: a decorated helper's dead
    comparison of a complex tensor). `saved`: the model `frozen` was
    loaded from, whose graph may still hold what loading dropped (seed
    271128, index 32224: a frozen weight's dead baddbmm before a raise
    whose condition freezing folded, which loading's compile drops)."""
    where = _raising_line(obj, module)
    if where is None:
        return False
    try:
        ran = [_forks_inlined(g) for g in _frozen_graphs(frozen)] if frozen is not None else []
        # Or, in jitamp's own graph of the model (or of the one saved), an
        # op that reads a jitamp op's result: a region token is never a
        # constant, so neither is what reads one (docs/frozen.md, "Fold
        # barriers").
        unfolded = bool(ran) and any(
            _reads_an_argument(_forks_inlined(_inlined(m.forward.graph)), where, {}, jitamp_ops=True)
            for m in (frozen, saved) if m is not None)
    except Exception:  # noqa: BLE001 - a graph this torch cannot read: no proof
        ran, unfolded = [], False
    for text in (source, scope_free_twin(source)):
        try:
            with scripted_without_jitamp(text, directory, stem + "_dead_code") as (plain, scripted):
                graph = _inlined(getattr(scripted, "forward", scripted).graph)
                # the program's file under the name it has scripted without jitamp
                rename = {plain.__file__: module.__file__}
                lines = {(rename.get(path, path), line): is_live
                         for (path, line), is_live in _live_lines(graph).items()}
                # Gone from the frozen graph, and not by constant folding (which
                # fold barriers keep from ops the autocast state decides): an
                # op that reads a forward argument is never a constant.
                # Forked callees included, fork by fork as direct calls: a
                # fork's subgraph is no block of it, which neither graph
                # walk enters (seed 112902, index 19130: a dead lstm_cell of
                # a helper called only forked). Presence and counts only:
                # liveness (`lines`) is the graph's as TorchScript runs it.
                # In every plan the frozen model ran, where it has them.
                flat = _forks_inlined(graph)
                gone = (bool(ran) and (unfolded or _reads_an_argument(flat, where, rename))
                        and all(where not in _live_lines(g) or _fewer_ops(g, flat, where, rename)
                                for g in ran))
            return lines.get(where) is False or gone or (
                where not in lines and (_others_of_its_function_run(source, where, lines)
                                        or _compiled_without(plain, source, where[1])))
        except Exception:
            continue
    return False


def _others_of_its_function_run(source: str, where: tuple[str, int], lines: dict) -> bool:
    """Whether the graph has nodes from other lines of the function that
    holds `where`: then the front end emitted nothing for `where` itself
    (an `if c: pass` it dropped), which TorchScript never runs. Not so for
    a function it never compiles (`@torch.jit.ignore`) or a fork's target."""
    path, line = where
    inner = _innermost_function(source, line)
    return inner is not None and any(p == path and inner.lineno < l <= inner.end_lineno for p, l in lines)


def _innermost_function(source: str, line: int) -> ast.FunctionDef | None:
    """The innermost `def` of `source` that holds `line`, if one does."""
    functions = [node for node in ast.walk(ast.parse(source))
                 if isinstance(node, ast.FunctionDef) and node.lineno <= line <= node.end_lineno]
    return max(functions, key=lambda node: node.lineno) if functions else None


def _compiled_without(plain: Any, source: str, line: int) -> bool:
    """Whether the innermost function holding `line` is a module-level
    function of `plain` that scripting the program compiled (a scripted
    callee), with no node from `line` in its graph: the front end emitted
    nothing for the line or removed it as dead code, so TorchScript never
    runs it. Where nothing of the callee is left once inlined, the graph
    the caller runs cannot tell (seed 291115, index 998: a helper that
    returns an argument, after an `if` on a complex tensor's sum whose
    branch binds a tuple nothing reads)."""
    inner = _innermost_function(source, line)
    fn = getattr(plain, inner.name, None) if inner is not None else None
    if not inspect.isfunction(fn):  # none, a method, or not the module's
        return False
    # (by its qualified name, as the front end finds it: torch.jit.script's
    # cache of the functions it compiled does not hold it in every run)
    compiled = torch.jit._state._python_cu.find_function(torch._jit_internal._qualified_name(fn))
    if compiled is None:  # not compiled: ignored, or never called
        return False
    return all(l != line for path, l in _live_lines(compiled.graph) if path == plain.__file__)


def _frozen_graphs(frozen: Any) -> list[torch._C.Graph]:
    """The graphs the frozen model ran: its executor's plans (loops
    unrolled, then dead code eliminated: seed 271127, index 34015, where a
    scripted helper's cdist in a loop of two feeds the next iteration's
    condition only, and the second iteration's body is dead once the loop
    is unrolled), else, where it has none or one holds a subgraph (a fusion
    group's ops are no block's), its forward's graph, callees inlined, with
    the dead code elimination every executor runs before the first call.
    That one reads aliases: it drops a write nothing live reads, which
    _live_lines counts as live (seed 125, index 1889: an out= softmax of a
    loaded model, whose graph ends in a raise once loading inlined a callee
    that only raises; the profiling executor's plan is not made yet when
    the first call differs)."""
    try:
        plans = [plan.graph for plan in frozen.get_debug_state().execution_plans.values()]
    except RuntimeError:  # no plan yet (or no executor state to read)
        plans = []
    if not plans or any(n.hasAttribute("Subgraph") for g in plans for n in graph_nodes(g)):
        plans = [frozen.forward.graph]
    graphs = [_inlined(graph) for graph in plans]
    # (torch 2.4.1 binds only the alias-blind pass, which keeps every write)
    eliminate = getattr(torch._C, "_jit_pass_dce_graph", torch._C._jit_pass_dce)
    for graph in graphs:
        eliminate(graph)
    return graphs


def _forks_inlined(graph: torch._C.Graph) -> torch._C.Graph:
    """A copy of `graph` (callees inlined) with each fork's subgraph put
    in its place and each wait of it replaced by what it returns
    (TorchScript's InlineForkWait), its callees inlined, until no fork is
    left: every op a call may run, on the values it reads (a forked
    callee's lines keep their source ranges). Read, never run; `graph`
    itself where the pass refuses it."""
    flat = graph.copy()
    try:
        for _ in range(8):  # a fork inside a forked callee: the next round
            if not any(node.kind() == "prim::fork" for node in graph_nodes(flat)):
                return flat
            torch._C._jit_pass_inline_fork_wait(flat)
            flat = _inlined(flat)
    except RuntimeError:
        pass
    return graph


def _aten_ops_of(graph: torch._C.Graph, where: tuple[str, int], rename: dict | None = None,
                 arguments: set | None = None) -> Counter:
    """How many nodes of each aten op of `graph` come from (file, line)
    `where`; with `arguments` (debug names), only those that read one of
    them (_reads_an_argument)."""
    rename = rename or {}
    found = Counter()
    for node in graph_nodes(graph):
        line = _LINE.match(node.sourceRange().strip())
        if (line and _op_kind(node).startswith("aten::")
                and (rename.get(line.group(1), line.group(1)), int(line.group(2))) == where
                and (arguments is None or _reaches(list(node.inputs()), arguments))):
            found[_op_kind(node)] += 1
    return found


def _fewer_ops(frozen: torch._C.Graph, plain: torch._C.Graph, where: tuple[str, int], rename: dict) -> bool:
    """Whether the frozen graph has fewer nodes of one of the aten ops of
    line `where` than the plain program's graph (both inlined) has nodes of
    it that read an argument: no constant folding made those."""
    kept = _aten_ops_of(frozen, where)
    arguments = {v.debugName() for v in list(plain.inputs())[1:]}
    return any(kept[kind] < count for kind, count in _aten_ops_of(plain, where, rename, arguments).items())


def _reads_an_argument(graph: torch._C.Graph, where: tuple[str, int], rename: dict,
                       jitamp_ops: bool = False) -> bool:
    """Whether a node of `graph` from (file, line) `where` reads, through
    any chain of nodes, an argument of the graph other than self (with
    `jitamp_ops`, or the result of a jitamp op)."""
    arguments = {v.debugName() for v in list(graph.inputs())[1:]}
    if jitamp_ops:
        arguments |= {v.debugName() for node in graph_nodes(graph) if _op_kind(node).startswith("jitamp::")
                      for v in node.outputs()}
    work = []
    for node in graph_nodes(graph):
        found = _LINE.match(node.sourceRange().strip())
        if found and (rename.get(found.group(1), found.group(1)), int(found.group(2))) == where:
            work.extend(node.inputs())
    return _reaches(work, arguments)


def _reaches(work: list, arguments: set) -> bool:
    """Whether one of the values `work` is, through any chain of nodes, one
    of `arguments` (debug names). An object the graph makes reads what is
    assigned to its attributes (seed 112807, index 43525: a `Pair` of an
    input)."""
    seen: set = set()
    while work:
        value = work.pop()
        if value.debugName() in seen:
            continue
        seen.add(value.debugName())
        if value.debugName() in arguments:
            return True
        node = value.node()
        if node.kind() == "prim::Param":  # a block's parameter: what its owner reads
            owner = node.owningBlock().owningNode()
            if owner is not None:
                work.extend(owner.inputs())
            continue
        if node.kind() == "prim::CreateObject":
            work.extend(v for use in value.uses() if use.user.kind() == "prim::SetAttr"
                        for v in use.user.inputs())
        # an if's or a loop's result: what its blocks return (seed 112902,
        # index 19130: a value an argument's op assigns in a loop's body)
        for block in node.blocks():
            work.extend(block.returnNode().inputs())
        work.extend(node.inputs())
    return False


_NODE = re.compile(r"which is output (\d+) of \w+, is at version")
_ANY_NODE = re.compile(r"which is output \d+ of [\w:()\s]+?, is at version")
_SUBGRAPH_NODE = re.compile(r"DifferentiableGraph(Backward)?, is at version")
# what a profiling plan's symbolic formula saved: a subgraph's output, or a
# view the executor rebuilds (autograd's node names end in "Backward0" on
# torch 2.4)
_SAVED_BY_FORMULA = re.compile(_SUBGRAPH_NODE.pattern + r"|of AsStrided(Backward0)?, is at version")


_COMPLEX = re.compile(r"complex64|torch\.complex\(|torch\.polar\(|torch\.fft\.|linalg\.eig")
_FORK = re.compile(r"(\w+) = torch\.jit\.fork\((\w+), ([^)]*)\); (\w+) = torch\.jit\.wait\(\1\)")


_WITH = re.compile(r"^([ \t]*)with .+:[ \t]*$", re.M)
_DECORATOR = re.compile(r"^[ \t]*@torch\.autocast\(.*\)[ \t]*$", re.M)


def scope_free_twin(source: str) -> str:
    """`source` with every `with` block (the generator writes them for
    autocast scopes only) an `if True:` block and no `@torch.autocast`
    decorator: what eager computes with every scope doing nothing, in a
    program TorchScript's front end takes (an early return before a `with`
    block it does not). Line for line the program's."""
    return _DECORATOR.sub("", _WITH.sub(r"\1if True:", source))


def without_forks(source: str) -> str:
    """`fut = torch.jit.fork(f, args); v = torch.jit.wait(fut)` -> `v = f(args)`."""
    return _FORK.sub(r"\4 = \2(\3)", source)


# Errors autograd raises only in backward, as a node runs: a saved tensor
# modified in place since, a node whose derivative is not implemented.
# Errors of backward: autograd's own checks, and a backward kernel's dtype
# check (mse/huber loss backward given a gradient of another dtype; seed
# 112602, index 50).
_BACKWARD_ERROR = re.compile(
    r"modified by an inplace operation|derivative for \S+ is not implemented|Found dtype \w+ but expected \w+")


def _backward_errors(message: str, sides: tuple | None = None, module: Any = None) -> bool:
    """Whether both sides of the oracle's message raised in backward: by
    the error's words, or (given `sides`, eager's and the scripted
    callables) because that side's forward returns and its backward raises
    at the call, called again as the oracle calls it (an op a backward
    formula calls may raise any error: autocast's own, for a cat of
    gradients of two lower dtypes, seed 112902, index 22763)."""
    raised = [ln for ln in message.split("\n") if ln.startswith(("eager raised ", "scripted raised "))]
    if len(raised) != 2:
        return False
    found = re.match(r"call (\d+):", message)
    for line in raised:
        if _BACKWARD_ERROR.search(line):
            continue
        if sides is None or found is None:
            return False
        fn = sides[0] if line.startswith("eager") else sides[1]
        if not _raises_in_backward(fn, module, int(found.group(1))):
            return False
    return True


def _raises_in_backward(fn, module, call: int) -> bool:
    """Whether `fn`, called as the oracle calls it (calls 1 .. call-1
    first), returns at `call` and its backward raises (run_side keeps the
    forward's result where only the backward raised)."""
    outer = make_outer(module.OUTER)
    try:
        for earlier in range(1, call + 1):
            result, error, _, _ = oracle.run_side(fn, module.make_args(earlier), outer, module.GRAD)
        return result is not None and error is not None
    finally:
        oracle.reset_autocast_state()


def _known_finding(kind, obj, scripted, module, source, directory, stem, message="") -> str | None:
    """A difference TorchScript's fork makes (not jitamp), recognized so that
    a batch reports it apart: a gradient difference in a program that forks
    which goes away when each fork/wait pair becomes a direct call. A forked
    task runs on another thread, whose autograd nodes get that thread's
    sequence numbers, so backward sums the gradient contributions of a
    value used in and out of the task in another order (plain TorchScript
    gives the same gradients: tests/regressions/torchscript_fork_gradient_order.py,
    tests/test_fuzz_regressions.py), and where two nodes would fail, runs
    another one first: eager's NotImplemented node (an out= op's result,
    numbered to run as soon as ready), which the task's nodes make ready,
    against an in-place check that runs before them (finding 8). Where the
    direct calls differ from eager as TorchScript does (a "known:" kind),
    what the fork adds is still the order. Fuzz
    findings fixed in jitamp: a fork subgraph optimized by TorchScript's
    default executor (finding 1's values), and an op's casts in another
    order than eager's (finding 2).
    """
    if _fork_order_only(kind, module, source, directory, stem, message, (obj, scripted)):
        return "known:fork-grad-order"
    if kind in ("mismatch:value", "mismatch:grad") and _eager_varies(obj, module):
        return "known:eager-nondeterministic"
    if _profiling(module) and _COMPLEX.search(module.SOURCE) and (
            kind == "mismatch:grad" or kind == "mismatch:error" and _REAL_GRAD_OF_COMPLEX in message):
        # TorchScript's symbolic derivative formulas conjugate nothing (mul,
        # mm, addcmul, pow of complex tensors: plain TorchScript too,
        # tests/test_fuzz_regressions.py), nor take the real part of a
        # complex gradient flowing to a real input (add of a real and a
        # complex tensor: autograd's check raises; seed 112902, index
        # 83444); jitamp's own plan on the simple executor, eager's
        # autograd, gives eager's gradients (seed 112805, index 4770)
        if _simple_executor_agrees(source, directory, stem):
            return "known:profiling-complex-grad"
    if (kind.startswith("mismatch:") and _profiling(module)
            and _plain_torchscript_differs(obj, module, source, directory, stem, kind, message=message)):
        return "known:profiling-plain-torchscript"
    if (kind == "mismatch:error" and _raised_past(message)
            and _plain_words_it_so(obj, module, source, directory, stem, message, None, frozen=False)):
        return "known:plain-torchscript"
    if kind == "mismatch:error" and (
            _callee_drops_what_raised(module, message)
            or _raised_past(message) and _raises_in_dead_code(obj, module, source, directory, stem)):
        return "known:dead-code"
    return _profiling_plans_own(kind, module, source, directory, stem, message)


# Eager's alert for a kernel whose results may vary from run to run (a
# GPU's atomic adds), raised under torch.use_deterministic_algorithms(True).
_NONDETERMINISTIC_ALERT = "does not have a deterministic implementation"


def _eager_varies(obj, module) -> bool:
    """Whether eager's own results are no exact reference on the program's
    device: eager raises the alert of a kernel without a deterministic
    implementation under torch.use_deterministic_algorithms(True) (on a
    GPU: avg_pool3d's, max_pool3d's and adaptive_avg_pool3d's backwards,
    ...; a batch runs with the alert as a warning), or one of three more
    eager runs differs from another (a kernel that reads what it writes).
    Never for CPU programs (one thread, deterministic kernels)."""
    if getattr(module, "DEVICE", None) in (None, "cpu"):
        return False
    outer = make_outer(module.OUTER)
    mode = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        for call in range(1, max(CALLS) + 1):
            _, error, _, _ = oracle.run_side(obj, module.make_args(call), outer, module.GRAD)
            if error is not None:
                if _NONDETERMINISTIC_ALERT in str(error):
                    return True
                break
    finally:
        torch.use_deterministic_algorithms(mode[0], warn_only=mode[1])
        oracle.reset_autocast_state()
    try:
        for _ in range(3):
            oracle.check_against_eager(obj, module.make_args(1), scripted=obj, outer=outer, calls=CALLS,
                                       grad=module.GRAD, args_for_call=module.make_args)
    except AssertionError:
        return True
    finally:
        oracle.reset_autocast_state()
    return False


def _simple_executor_agrees(source, directory, stem) -> bool:
    """Whether the profiling program, run on the simple executor (jitamp's
    plan, eager's autograd), compares ok or differs only as TorchScript does."""
    simple = run_source(source.replace("\nEXECUTOR = 'profiling'\n", "\nEXECUTOR = 'simple'\n"),
                        directory, stem + "_simple")
    return simple.kind == "ok" or simple.kind.startswith("known:")


def _profiling_plans_own(kind, module, source, directory, stem, message) -> str | None:
    """Where the scripted program returned or raised another error than
    eager's on the profiling executor, and the same program on the simple
    executor (jitamp's plan: no differentiable subgraphs, no reordering)
    gives eager's: a difference the profiling plan's symbolic autodiff
    makes, plain TorchScript too (tests/test_fuzz_regressions.py). Eager's
    dtype error the plan does not raise (it returns; or, where eager's
    error names both bfloat16 and float16, casts made under two regions'
    dtypes, it raises an error of another kind later on): a differentiable
    subgraph runs its ops on detached inputs, which eager's cast cache never
    serves, so its op casts a weight or input afresh where eager's cache
    hands it the cast of another dtype ("known:profiling-detached-cache";
    seed 112901, index 70468; seed 281209, index 28557, after
    torch.jit.save and load).
    Another error: the plan moved a later op, which autodiff left out of a
    subgraph, before the one eager reaches first
    ("known:profiling-error-order"; seed 112603, index 6771)."""
    if not (kind.endswith("mismatch:error") and _profiling(module) and _raised_past(message)):
        return None
    if not _simple_executor_agrees(source, directory, stem):
        return None
    lines = message.split("\n")
    eager = next((line for line in lines if "eager raised" in line), "")
    scripted = next((line for line in lines if "scripted raised" in line), "")
    dtype_error = r"same dtype|scalar type"
    two_regions = "BFloat16" in eager and "Half" in eager
    if re.search(dtype_error, eager) and ("scripted returned" in message
                                          or two_regions and not re.search(dtype_error, scripted)):
        return "known:profiling-detached-cache"
    return "known:profiling-error-order"


def _raised_past(message: str) -> bool:
    """Whether the oracle's error `message` says the scripted side returned
    where eager raised, or raised another error (later on, maybe)."""
    return ("scripted returned" in message or ": messages differ" in message
            or re.search(r"scripted raised \S+, eager \S+$", message.splitlines()[0]) is not None)


_INFERENCE_TENSOR_SAVED = "Inference tensors cannot be saved for backward"


def _plan_made_in_the_other_mode(module: Any, message: str, thread: int) -> bool:
    """Whether a thread's call met a plan the other thread made in the
    other grad mode (OUTER, thread 0's region, is inference mode; thread 1
    runs with grad), each way raising that an inference tensor cannot be
    saved for backward (plain TorchScript too: tests/test_fuzz_regressions.py):
    - thread 1: TorchScript makes a function's plan at its first call,
      folding constants then, so under inference mode a folded tensor
      constant (`torch.tensor([0, 1, 2, 3])`) is an inference tensor, which
      a later call in grad mode cannot save for backward; eager makes the
      tensor at each call (seed 112903, index 81968), and returns or
      raises another error further on (seed 271128, indices 14989 and
      92807: nll_loss's folded target, then a matmul's or a norm's dtype
      error eager reaches);
    - thread 0: the profiling executor's plan, optimized during a call with
      grad on, holds differentiable graphs, whose op saves its inputs for
      backward whatever the grad mode, so an inference tensor input of a
      call under inference mode raises (seed 112903, index 49203: eager
      raised another error further on)."""
    if module.OUTER != "inference_mode" or _INFERENCE_TENSOR_SAVED not in message:
        return False
    if thread == 1:
        eager = _raised(message, "eager")
        return eager is None or _INFERENCE_TENSOR_SAVED not in eager[1]
    return thread == 0 and _profiling(module)


def _fork_order_only(kind, module, source, directory, stem, message, sides: tuple | None = None) -> bool:
    """Whether a gradient difference (or backward error) of a program that
    forks goes away with each fork/wait pair a direct call: the program
    run again that way compares ok, or differs as TorchScript does (seed
    2603, index 52: autograd names the node "Mul1" there). `sides` (eager's
    and the scripted callables) lets a backward error be told by where it
    is raised, not only by its words."""
    if (kind.endswith(("mismatch:grad", "mismatch:error"))
            and "torch.jit.fork" in module.SOURCE and _FORK.search(source)
            and (kind.endswith("grad") or _backward_errors(message, sides, module))):
        plain = run_source(without_forks(source), directory, stem + "_nofork")
        return plain.kind == "ok" or plain.kind.startswith("known:")
    return False


def _callee_drops_what_raised(module: Any, message: str) -> bool:
    """Whether the scripted program raised, where eager returned or raised
    another error later, from a line of a `@torch.jit.script` callee (which
    eager calls too) of which the plan eager ran has no node left:
    TorchScript's dead code elimination deleted it there. TorchScript deletes a write to a value that nothing reads
    afterwards, and that no op it cannot see into (a call, an op without
    alias information) may hold, but not in a loop's body: inlined in a loop
    of the caller, the callee's `out=` op stays and raises ("some elements
    of the input tensor and the written-to tensor refer to a single memory
    location"), as eager's Python would; called by itself it is gone (seed
    2159, index 3287, torch 2.15 and 2.13; plain TorchScript's profiling
    executor unrolls the loop and drops it in both). Or a loop-carried value
    that only dead code reads: fft of a bfloat16 value, which raises, kept
    in the caller's loop (seed 1327, index 5358). Or a dead call of a
    library function, kept where the callee is inlined in the program's
    profiling plan (seed 112901, index 5281)."""
    # the scripted side's error, in any of the oracle's forms (eager
    # returned, messages differ, classes differ: NotImplementedError on
    # torch 2.15 where eager's later error is a RuntimeError)
    scripted = next((line for line in message.split("\n")
                     if re.match(r"(call \d+: )?scripted raised \w+\(", line)), "")
    # the innermost frame of the program's file: the op that raised may be
    # in a library function the callee's line calls (seed 112901, index
    # 5281: F.multi_margin_loss of a float16 value, dead in the callee)
    frames = [(path, line) for path, line in
              ((m.group(1), int(m.group(2))) for m in _LINE.finditer(scripted)) if path == module.__file__]
    if not frames:
        return False
    where = frames[-1]
    for fn in vars(module).values():
        if not isinstance(fn, torch.jit.ScriptFunction):
            continue
        graph = _inlined(fn.graph)
        if where not in _live_lines(graph):
            continue
        try:
            plans = list(fn.get_debug_state().execution_plans.values())
        except RuntimeError:  # never run
            return False
        return bool(plans) and all(where not in _live_lines(plan.graph) for plan in plans)
    return False


def _plain_torchscript_differs(obj, module, source, directory, stem, kind, *, frozen: bool = False,
                               make: Callable[[Any], Any] | None = None, message: str = "") -> bool:
    """Whether the program scripted without jitamp (frozen: then made an
    inference model by `make`, _PLAIN_MODEL's) differs
    from eager as jitamp's did (same kind). Only
    where autocast is nowhere (no scope in what the program runs, callees
    inlined: one in a helper nothing calls does not count; an eager region
    that leaves it off): there plain TorchScript runs what eager runs, and
    a difference is its own. Seen: the profiling executor's symbolic formula of softmax with
    `dtype=` fails with a float16 input ("expected scalar type Float but
    found Half"); freezing removes an `out=` softmax into the cumsum of a
    weight that only dead code reads, once the cumsum is a constant, and
    eager's out-dtype error with it (seed 1135, index 4766).

    An eager region that turns autocast on makes plain TorchScript a
    reference only where the region changes nothing eager computes (the
    program's tensors float64, or its ops without a policy on the region's
    device): eager inside the region, with autocast turned off around the
    program, gives the region's results, then plain TorchScript runs
    outside it (on torch 2.4.1 the same softmax formula, its input float16
    under a float16 region: seed 2419, index 1371).

    Where the region does change what eager computes, an error is still
    TorchScript's own where plain TorchScript, in the same region, raises it
    at the same call where eager returns (`message`: jitamp's): the same
    softmax formula, reached by a float16 input under a bfloat16 region
    whose addmm the region casts (seed 77112026, index 2718)."""
    if _plain_is_a_reference(obj, module, frozen=frozen):
        reference = module if _autocast_off(module.OUTER) else _outside_the_region(module)
        # the program, or where it opens scopes that change nothing eager
        # computes, its scope-free twin (seed 112805, index 5768: a float16
        # scope around a complex sum, then the profiling plan's addcmul
        # formula, which conjugates nothing)
        for text in (source, scope_free_twin(source)):
            try:
                with scripted_without_jitamp(text, directory, stem + "_plain_compare") as (_, plain):
                    if _autocast_scopes_in(plain) or (
                            text is not source and not _scopes_change_nothing(obj, reference, frozen=frozen)):
                        continue
                    model = (make or torch.jit.freeze)(plain.eval()) if frozen else plain
                    _compare(obj, model, reference, frozen=frozen)
                    return False
            except AssertionError as exc:
                return kind.rsplit(":", 1)[-1] == classify(str(exc))  # the same kind of difference
            except Exception:
                continue
    return (kind == "mismatch:error" and not frozen
            and _plain_raises_the_same(obj, module, source, directory, stem, message))


def _plain_is_a_reference(obj, module, *, frozen: bool) -> bool:
    """Whether the eager region leaves what eager computes as it is (off,
    or changing nothing: _region_changes_nothing)."""
    return _autocast_off(module.OUTER) or _region_changes_nothing(obj, module, frozen=frozen)


def _autocast_scopes_in(scripted: Any) -> bool:
    """Whether the program scripted without jitamp opens an autocast scope
    in what it runs (callees inlined; a scope only in a helper nothing calls
    is not, nor one that encloses no op: `with autocast: v1 = x0`, seed
    2152, index 1402), or forks (a forked function's graph is not
    inlined)."""
    graph = _inlined(getattr(scripted, "forward", scripted).graph)
    for node in graph_nodes(graph):
        if node.kind() in ("prim::fork", "prim::forkClosure"):
            return True
        if (node.kind() == "prim::Enter" and "autocast" in str(node.inputsAt(0).type())
                and not _encloses_no_op(node)):
            return True
    return False


def _encloses_no_op(enter: torch._C.Node) -> bool:
    """Whether only constants stand between the scope's prim::Enter and
    its prim::Exit (the same autocast object, the same block): an empty
    scope changes nothing any op computes."""
    scope = enter.inputsAt(0).debugName()
    for node in enter.owningBlock().nodes():
        if not node.isAfter(enter):
            continue
        if node.kind() == "prim::Exit" and node.inputsAt(0).debugName() == scope:
            return True
        if node.kind() != "prim::Constant":
            return False
    return False


# The oracle's message on an error: "call N: ..." first, and each side's
# error as "<side> raised Class('...')" (", eager returned" after the
# scripted side's where eager returned).
_CALL = re.compile(r"^call (\d+)")
_RAISED = re.compile(r"(eager|scripted) raised (\w+)\((.*)\)(?:, eager returned)?$", re.M | re.S)
# an error a dtype decides, which a cast jitamp missed could also raise
_DTYPE_ERROR = re.compile(r"dtype|scalar type|same type")


def _raised(message: str, side: str) -> tuple[str, str] | None:
    """The class and the message (unescaped from its repr) of `side`'s
    error in the oracle's `message`, or of its line; None where there is
    none."""
    for line in message.split("\n"):
        found = _RAISED.search(line)
        if found and found.group(1) == side:
            try:
                return found.group(2), str(ast.literal_eval(found.group(3)))
            except (ValueError, SyntaxError):
                return None
    return None


def _assertion(message: str, side: str) -> str | None:
    """The message of `side`'s AssertionError in the oracle's `message`:
    raised as such, or as TorchScript words it ("AssertionError: msg" in
    an error of another class, innermost line); None for another error."""
    raised = _raised(message, side)
    if raised is None:
        return None
    cls, text = raised
    if cls.rsplit(".", 1)[-1] == "AssertionError":
        return text.rstrip("\n")
    found = re.search(r"^(?:\w+Error: )?AssertionError: (.*)$", text.rstrip("\n").split("\n")[-1])
    return found.group(1) if found else None


def _scripted_error(message: str) -> tuple[str, str, str] | None:
    """The call, the class and the last line of the scripted side's error
    in the oracle's `message` (the traceback above that line names files)."""
    call = _CALL.match(message)
    raised = _raised(message, "scripted")
    if call is None or raised is None:
        return None
    return call.group(1), raised[0], _last_line(raised[1], raised[0])


def _last_line(text: str, cls: str) -> str:
    """The message's last line, without the `Cls: ` that TorchScript's
    interpreter puts before an error it passes on (eager's has none)."""
    lines = [line for line in text.splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    return last[len(cls) + 2:] if last.startswith(cls + ": ") else last


@contextlib.contextmanager
def _scopes_inert():
    """Eager with every autocast scope doing nothing, as plain TorchScript
    runs them with its built-in JIT autocast off."""
    autocast = torch.amp.autocast_mode.autocast
    enter, exit_ = autocast.__enter__, autocast.__exit__
    autocast.__enter__ = lambda self: self
    autocast.__exit__ = lambda self, *args: None
    try:
        yield
    finally:
        autocast.__enter__, autocast.__exit__ = enter, exit_


def _first_error(fn, module, outer, grad: bool | None = None) -> tuple[str, str, str] | None:
    """The call, class and last line of the first error `fn` raises, called
    as the oracle calls it (with GRAD, unless `grad` says); None where every
    call returns."""
    for call in range(1, max(CALLS) + 1):
        _, error, _, _ = oracle.run_side(fn, module.make_args(call), outer,
                                         module.GRAD if grad is None else grad)
        if error is not None:
            return str(call), type(error).__name__, _last_line(str(error), type(error).__name__)
    return None


def _plain_raises_the_same(obj, module, source, directory, stem, message) -> bool:
    """Whether the program scripted without jitamp, called as the oracle
    calls it in the same eager region, first raises at the call and with
    the error where jitamp's raised and eager did not (`message`): a
    difference plain TorchScript makes where it is no reference for values
    (an eager region that changes them, or scopes, which it runs with
    autocast off). Seen: an `out=` softmax with grad, where eager's kernel
    runs on (seed 77112026, index 8814). Not for an error a dtype decides:
    a cast jitamp missed would give plain TorchScript's uncast dtypes;
    there, only a symbolic formula of the profiling plan that raises alone
    on the dtypes eager gives its op (_formula_raises_on_eagers_inputs).
    Where the program has scopes, eager with its scopes doing nothing must
    not raise it there too: a scope jitamp failed to enter would look the
    same."""
    mine = _scripted_error(message)
    if mine is None:
        return False
    outer = make_outer(module.OUTER)
    try:
        with scripted_without_jitamp(source, directory, stem + "_plain_same_error") as (_, plain):
            scopes = _autocast_scopes_in(plain)
            if _DTYPE_ERROR.search(mine[2]) is not None:
                if not _formula_raises_on_eagers_inputs(obj, module, directory, stem, message):
                    return False
            else:
                builtin = torch._C._jit_set_autocast_mode(False)  # its scopes do nothing
                try:
                    if _first_error(plain, module, outer) != mine:
                        return False
                finally:
                    torch._C._jit_set_autocast_mode(builtin)
        if scopes:
            with _scopes_inert():
                return _first_error(_unwrapping_callee_errors(obj), module, outer) != mine
    except Exception:
        return False
    return True


# The op whose symbolic formula raised, by the forward line the formula's
# frame shows above its backward: `result = torch.softmax(self, dim, dtype)`.
_FORMULA_OP = re.compile(
    r"in <backward op>\n(?:[^\n]*\n)*?\s*\w+ = torch\.(\w+)\(self\b[^\n]*\n\s*def backward\(")


class _CallsOf(torch.overrides.TorchFunctionMode):
    """Records each call of the torch function, Tensor method or functional
    named `name` that eager makes: the call as TorchScript source over its
    tensors (`Tensor` parameters), the tensors' dtypes and shapes, and the
    thread's autocast state (oracle.autocast_state) at the call."""

    def __init__(self, name: str):
        super().__init__()
        self.name, self.calls = name, set()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if getattr(func, "__name__", None) == self.name:
            self._record(func, args, kwargs)
        return func(*args, **kwargs)

    def _record(self, func, args, kwargs) -> None:
        tensors: list = []

        def text(value: Any) -> str:
            if isinstance(value, torch.Tensor):
                tensors.append((value.dtype, tuple(value.shape)))
                return f"t{len(tensors) - 1}"
            if isinstance(value, (list, tuple)):
                return "[" + ", ".join(map(text, value)) + "]"
            if isinstance(value, (bool, int, float, str, type(None), torch.dtype)):
                return repr(value)
            raise TypeError(value)
        if func is getattr(torch.Tensor, self.name, None) and args:
            head, args = text(args[0]) + "." + self.name, args[1:]
        elif func is getattr(torch, self.name, None):
            head = "torch." + self.name
        elif func is getattr(torch.nn.functional, self.name, None):
            head = "torch.nn.functional." + self.name
        else:
            return
        try:
            call = head + "(" + ", ".join([text(a) for a in args]
                                          + [f"{k}={text(v)}" for k, v in kwargs.items()]) + ")"
        except TypeError:
            return
        self.calls.add((call, tuple(tensors), oracle.autocast_state()[:-1]))


@contextlib.contextmanager
def _autocast_state_set(state: tuple):
    """The thread's autocast state set to `state` (oracle.autocast_state's,
    without the nesting) inside; as before after."""
    before = oracle.autocast_state()[:-1]

    def set_(flags: tuple) -> None:
        for device, (on, dtype) in zip(oracle.autocast_devices(), flags[:-1]):
            torch.set_autocast_enabled(device, on)
            torch.set_autocast_dtype(device, dtype)
        torch.set_autocast_cache_enabled(flags[-1])
    set_(state)
    try:
        yield
    finally:
        set_(before)
        torch.clear_autocast_cache()


def _formula_raises_on_eagers_inputs(obj, module, directory, stem, message) -> bool:
    """Whether the op whose symbolic formula raised in the scripted side's
    error (`message`: the oracle's; _FORMULA_OP), called alone in plain
    TorchScript (no jitamp, its built-in autocast pass off) on tensors of
    the dtypes and shapes eager gives that op somewhere in the program (up
    to the failing call, in the autocast state eager had there), with grad,
    raises the same error at the same call: the formula's own, for inputs
    eager gives it. The dtypes come from eager, never from a plan, so a cast
    jitamp missed cannot make its own case: it would change the formula's
    dtypes and so its message (and call 1, before any plan differentiates,
    compared every value the program keeps with eager's, dtypes included).
    Seen: softmax with `dtype=float32` on a float16 input, whose formula
    passes the input's dtype to `_softmax_backward_data` with a float32
    gradient: under a bfloat16 region whose addmm the region casts (seed
    77112026, index 2718), outside every scope with scopes after it that
    plain TorchScript's uncast float16 would fail (seed 112902, index
    46442), inside a bfloat16 scope under a bfloat16 region (seed 271127,
    index 21686)."""
    mine, raised = _scripted_error(message), _raised(message, "scripted")
    found = _FORMULA_OP.search(raised[1]) if raised else None
    if mine is None or found is None:
        return False
    recorder = _CallsOf(found.group(1))
    with recorder:
        for call in range(1, int(mine[0]) + 1):
            oracle.run_side(_unwrapping_callee_errors(obj), module.make_args(call),
                            make_outer(module.OUTER), module.GRAD)
    for i, (call, tensors, state) in enumerate(sorted(recorder.calls, key=str)):
        params = ", ".join(f"t{j}: Tensor" for j in range(len(tensors)))
        source = (f"import torch\nfrom torch import Tensor\n\n\ndef formula_op({params}):\n"
                  f"    return {call}\n\n\ndef build():\n    return formula_op\n")
        alone = types.SimpleNamespace(GRAD=True, make_args=lambda _call, tensors=tensors: [
            torch.randn(shape).to(dtype) for dtype, shape in tensors])
        try:
            with scripted_without_jitamp(source, directory, f"{stem}_formula_{i}") as (_, plain), \
                    _autocast_state_set(state):
                builtin = torch._C._jit_set_autocast_mode(False)
                # the op differentiated alone, as in a larger subgraph (the
                # plan inlines a subgraph of one node: no formula runs)
                torch._C._debug_set_autodiff_subgraph_inlining(False)
                try:
                    if _first_error(plain, alone, None) == mine:
                        return True
                finally:
                    torch._C._debug_set_autodiff_subgraph_inlining(True)
                    torch._C._jit_set_autocast_mode(builtin)
        except Exception:
            continue
    return False


def _plain_words_it_so(obj, module, source, directory, stem, message, make: Callable[[Any], Any] | None,
                       *, frozen: bool = True) -> bool:
    """Where eager and a frozen model (frozen=False: the scripted program,
    make None) raise at the same call with other messages: whether the
    message is TorchScript's. Eager with every
    scope doing nothing (and no region) raises eager's error at that call
    too, so autocast decides nothing up to it, and the program scripted
    without jitamp and made the same way (`make`: frozen, optimized) raises
    the model's: the program's scope-free twin (scope_free_twin: plain
    TorchScript cannot script every program jitamp does, and ignores scopes
    anyway). Seen: a float16 input's matmul with a float32 weight outside
    every scope, frozen on the profiling executor: "expected scalar type
    Half but found Float" for eager's "expected m1 and m2 to have the same
    dtype" (seed 112804, index 2288; plain TorchScript too). Unfrozen: a
    comparison of a complex tensor in an `if` whose body only builds an
    object nothing reads, which eager raises and TorchScript's plan skips,
    raising a later error (seed 112807, index 61471)."""
    mine, eager = _scripted_error(message), _raised(message, "eager")
    if mine is None or eager is None or not _autocast_off(module.OUTER):
        return False
    theirs = (mine[0], eager[0], _last_line(eager[1], eager[0]))
    outer = oracle.no_grad_under(make_outer(module.OUTER)) if frozen else make_outer(module.OUTER)
    grad = False if frozen else None
    try:
        with _scopes_inert():
            if _first_error(_unwrapping_callee_errors(obj), module, outer, grad=grad) != theirs:
                return False
        with scripted_without_jitamp(scope_free_twin(source), directory, stem + "_plain_words") as (_, plain):
            builtin = torch._C._jit_set_autocast_mode(False)  # its scopes do nothing
            try:
                model = make(plain.eval()) if make is not None else plain
                return _first_error(model, module, outer, grad=grad) == mine
            finally:
                torch._C._jit_set_autocast_mode(builtin)
    except Exception:
        return False


def _region_changes_nothing(obj, module, *, frozen: bool = False) -> bool:
    """Whether eager computes the same inside the eager region OUTER (an
    autocast) as with autocast turned off around the program: values,
    dtypes, gradients, errors, by the oracle."""
    device = module.OUTER[0]

    def region_off(*args):
        with torch.autocast(device, enabled=False):
            return obj(*args)
    try:
        _compare(obj, region_off, module, frozen=frozen)
    except AssertionError:
        return False
    return True


def _scopes_change_nothing(obj, module, *, frozen: bool = False) -> bool:
    """Whether eager computes the same with every autocast scope of the
    program doing nothing (_scopes_inert): values, dtypes, gradients,
    errors, by the oracle."""
    def inert(*args):
        with _scopes_inert():
            return obj(*args)
    try:
        _compare(obj, inert, module, frozen=frozen)
    except AssertionError:
        return False
    return True


def _outside_the_region(module: Any) -> Any:
    """The program's module with no eager region around its calls."""
    outside = type(module)(module.__name__ + "_outside")
    outside.__dict__.update(vars(module))
    outside.OUTER = None
    return outside


def _message_in(eager: str, scripted: str) -> bool:
    """Whether the message of the oracle's line `eager raised Cls('...')`
    starts within that of its `scripted raised Cls('...')` line. Both hold
    reprs, which escape quotes as each message needs (`"can't"` against
    `'... can\\'t'`): the messages are compared, not the reprs."""
    eager_raised, scripted_raised = _raised(eager, "eager"), _raised(scripted, "scripted")
    eager_message = eager_raised[1] if eager_raised else None
    scripted_message = scripted_raised[1] if scripted_raised else None
    return (eager_message is not None and scripted_message is not None
            and eager_message[:80] in scripted_message)


def known_difference(message: str, profiling: bool = False) -> str | None:
    """A difference TorchScript itself makes (not jitamp), by the oracle's
    message; None for anything else. `profiling`: the program ran on the
    profiling executor, whose symbolic autodiff raises two errors of its
    own (plain TorchScript too; docs/executors.md, "Symbolic autodiff")."""
    lines = message.split("\n")
    eager = next((ln for ln in lines if ln.startswith("eager raised ")), None)
    scripted = next((ln for ln in lines if ln.startswith("scripted raised ")), None)
    # a gradient NaN on one side only: symbolic formulas multiply by a mask
    # where eager's select (relu's `grad * (result > 0)` against
    # threshold_backward), so a NaN gradient (kl_div's log of a zero target)
    # survives a mask that eager's zeroes (plain TorchScript too)
    if profiling and re.match(r"call \d+ grad\[", message) and "Greatest absolute difference: nan" in message:
        return "known:profiling-nan-grad"
    view_of_leaf = "a view of a leaf Variable that requires grad is being used in an in-place"
    if profiling and (scripted and view_of_leaf in scripted and view_of_leaf not in (eager or "")
                      or re.match(r"call \d+: scripted raised ", message) and message.endswith(", eager returned")
                      and view_of_leaf in message):
        return "known:profiling-view-of-leaf"
    # a formula of TorchScript's symbolic autodiff that raises where eager's
    # derivative works (abs of a complex tensor: `self.sign()`), or before
    # the error eager's backward raises elsewhere (a saved tensor modified
    # in place; seed 1138, index 4116, plain TorchScript too); not a dtype
    # error, which jitamp's autodiff boundaries exist to prevent
    formula_raised = (scripted is not None and "in <backward op>" in scripted
                      if eager is not None else
                      re.match(r"call \d+: scripted raised ", message) and message.endswith(", eager returned")
                      and "in <backward op>" in message)
    # or the reverse: eager's own call of a `@torch.jit.script` callee ran
    # the formula (its plan's second call), the scripted program's plan
    # did not (seed 112807, index 68678: the saved program's plan, profiled
    # where a flag skipped the callee)
    formula_raised = formula_raised or (
        scripted is not None and "in <backward op>" not in scripted and "in <backward op>" in eager
        if eager is not None else
        re.match(r"call \d+: eager raised ", message) and message.endswith(", scripted returned")
        and "in <backward op>" in message)
    if profiling and formula_raised and not re.search(r"dtype|scalar type|same type", message):
        return "known:profiling-backward-formula"
    # an out= form in a differentiable subgraph raises autograd's out=
    # error where eager's op raises that its derivative is not implemented,
    # or where eager runs it (the out tensor made from a parameter, the
    # inputs needing no grad: eager's kernel asks the inputs; seed 1138,
    # index 1604, plain TorchScript too), or before the out= op's own check
    # of its out tensor that eager raises (the out tensor a differentiable
    # subgraph's output: seed 2604, index 1505, plain TorchScript too,
    # tests/regressions/torchscript_profiling_out_grad_before_out_dtype.py)
    out_grad = "support automatic differentiation"
    out_check = r"\bout tensor\b|\bout=|desired output type"  # the out= op's own check
    if profiling and (scripted and eager and out_grad in scripted and out_grad not in eager
                      and ("is not implemented" in eager or re.search(out_check, eager))
                      or re.match(r"call \d+: scripted raised ", message)
                      and message.endswith(", eager returned") and out_grad in message):
        return "known:profiling-out-grad"
    # An op's error in a forked task comes back from torch.jit.wait as a
    # RuntimeError (TorchScript's interpreter stores it in the future as its
    # message): eager's class (NotImplementedError, ...) is lost, with or
    # without jitamp.
    first = lines[0] if lines else ""
    if (eager and scripted and "<forked function>" in scripted
            and re.search(r"scripted raised builtins\.RuntimeError, eager builtins\.\w+Error$", first)):
        if _message_in(eager, scripted):
            return "known:fork-error-class"
    # TorchScript's interpreter re-raises torch.linalg's LinAlgError and c10's
    # TypeError as RuntimeError (plain TorchScript too: tests/test_fuzz_regressions.py).
    if (eager and scripted
            and re.search(r"scripted raised builtins\.RuntimeError, eager (torch\._C\._LinAlgError|builtins\.TypeError)$", first)):
        if _message_in(eager, scripted):
            return "known:torchscript-error-class"
    # TorchScript compiles `assert c, msg` and `raise AssertionError(msg)`
    # to a raise of "AssertionError: msg" whose class is lost (torch.jit.Error,
    # innermost line "RuntimeError: AssertionError: msg"; plain TorchScript
    # too: tests/test_fuzz_regressions.py), which a fork wraps once more
    # (RuntimeError), and which eager meets as it is where it calls a
    # `@torch.jit.script` helper.
    assertion = _assertion(message, "eager") if eager and scripted else None
    if assertion is not None and assertion == _assertion(message, "scripted"):
        return "known:torchscript-error-class"
    if eager and scripted and "modified by an inplace operation" in eager:
        # eager's `x * 2.0` is aten::mul.Tensor (MulBackward0), TorchScript's
        # aten::mul.Scalar (MulBackward1): the error names the node
        e = _NODE.sub(r"which is output \1 of <node>, is at version", eager[len("eager raised "):])
        s = _NODE.sub(r"which is output \1 of <node>, is at version", scripted[len("scripted raised "):])
        if e == s:
            return "known:autograd-node-name"
        # the profiling executor's differentiable subgraph is one node with
        # many outputs ("output 2 of ...::DifferentiableGraph"; on torch 2.4
        # "...::DifferentiableGraphBackward")
        e = _ANY_NODE.sub("which is <output>, is at version", eager[len("eager raised "):])
        s = _ANY_NODE.sub("which is <output>, is at version", scripted[len("scripted raised "):])
        if profiling and _SUBGRAPH_NODE.search(scripted) and e == s:
            return "known:profiling-autograd-node"
    # a symbolic formula that saves a tensor eager's derivative does not
    # (softmax with dtype= saves its input), changed in place after; or a
    # view of the subgraph's result that it saves, rebuilt by the executor
    # as "AsStrided" (`cat([x[:1], v[:2]])`, then `v.mul_(2)`; seed 215,
    # index 675 on torch 2.15, plain TorchScript too)
    if (profiling and re.match(r"call \d+: scripted raised ", message) and message.endswith(", eager returned")
            and "modified by an inplace operation" in message and _SAVED_BY_FORMULA.search(message)):
        return "known:profiling-saved-by-formula"
    # ... where eager's backward raises too, for the tensor it saved: each
    # names its own (seed 1141, index 6923: eager's "output 0 of Clamp1",
    # the plan's "[2, 4] ... output 0 of AsStrided"; plain TorchScript too)
    if (profiling and eager and scripted and "modified by an inplace operation" in eager
            and "modified by an inplace operation" in scripted
            and _SAVED_BY_FORMULA.search(scripted) and not _SAVED_BY_FORMULA.search(eager)):
        return "known:profiling-saved-by-formula"
    return None


def _eager_raises(fn, module) -> bool:
    outer = make_outer(module.OUTER)
    try:
        with (outer() if outer else contextlib.nullcontext()):
            fn(*module.make_args(1))
        return False
    except Exception:
        return True
    finally:
        oracle.reset_autocast_state()


def run_source(source: str, directory: str, stem: str = "fz", save: bool | None = None) -> Result:
    """Scripts and compares one program's source (see the module docstring)."""
    oracle.reset_autocast_state()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return _run_source(source, directory, stem, save)
        finally:
            oracle.reset_autocast_state()


def _run_source(source: str, directory: str, stem: str, save: bool | None) -> Result:
    # Import with jitamp enabled: `@torch.jit.script` callees compile at import.
    profiling = _scripted_for_profiling(source)
    try:
        with jitamp_enabled(True, profiling_executor=profiling):
            module = load_source(source, directory, stem)
            module.SOURCE = code_of(source)
            obj = module.build()
            scripted = torch.jit.script(obj)
    except Exception as exc:  # does it script without jitamp?
        message = f"{type(exc).__name__}: {exc}"
        try:
            with scripted_without_jitamp(source, directory, stem + "_plain"):
                pass
        except Exception as plain_exc:
            if "decorator is not supported in script mode" in str(plain_exc):
                # `@torch.autocast` on a function: jitamp-only syntax
                return Result("script", message)
            return Result("reject", f"{type(plain_exc).__name__}: {plain_exc}")
        return Result("script", message)
    try:
        eager_raised = _eager_raises(obj, module)
        with jitamp_enabled(module.RUNTIME_JITAMP):
            try:
                _compare(obj, scripted, module)
            except AssertionError as exc:
                kind = known_difference(str(exc), profiling) or "mismatch:" + classify(str(exc))
                if kind in ("mismatch:value", "mismatch:grad", "mismatch:error"):
                    kind = _known_finding(kind, obj, scripted, module, source, directory, stem, str(exc)) or kind
                return Result(kind, str(exc), eager_raised)
            if getattr(module, "THREADS", None):
                try:
                    _compare_in_threads(obj, scripted, module)
                except ThreadMismatch as exc:
                    found = str(exc.__cause__)  # the oracle's message, without the thread's
                    kind = known_difference(found, profiling) or "threads-mismatch:" + classify(found)
                    if _fork_order_only(kind, module, source, directory, stem, found):
                        kind = "known:fork-grad-order"
                    elif kind == "threads-mismatch:error" and _plan_made_in_the_other_mode(
                            module, found, exc.thread):
                        kind = "known:inference-mode-plan"
                    elif alone := _alone_in_its_region(source, found, exc.region, directory, stem):
                        kind = alone
                    elif _autocast_off(exc.region) and (
                            own := _profiling_plans_own(kind, module, source, directory, stem, found)):
                        # the same, met only after the other thread's calls:
                        # the plan the thread without autocast runs orders
                        # ops as the profiling runs before it had it (seed
                        # 281207, index 21856: it profiled under OUTER with
                        # gradients, then ran rnn_relu_cell before the
                        # matmul that eager raises at)
                        kind = own
                    return Result(kind, str(exc), eager_raised)
            save = save if save is not None else module.SAVE
            if save:
                try:
                    _compare(obj, _saved_and_loaded(scripted), module)
                except AssertionError as exc:
                    # (seed 112807, index 68678: eager's own scripted callee
                    # ran a symbolic formula that the saved program's plan
                    # did not)
                    kind = known_difference(str(exc), profiling) or "saved-mismatch:" + classify(str(exc))
                    # a fork's gradient order varies with thread timing: the
                    # saved model may meet it where the first comparison did
                    # not (seed 112704, index 19628)
                    if _fork_order_only(kind, module, source, directory, stem, str(exc)):
                        kind = "known:fork-grad-order"
                    else:
                        kind = _profiling_plans_own(kind, module, source, directory, stem, str(exc)) or kind
                    return Result(kind, str(exc), eager_raised)
            if module.KIND == "module":
                failed = _compare_frozen(obj, scripted, module, source, directory, stem, save=save)
                if failed is not None:
                    return Result(failed[0], failed[1], eager_raised)
            if getattr(module, "ADD_AUTOCAST", None):
                failed = _compare_add_autocast(obj, module, source, directory, stem)
                if failed is not None:
                    return Result(failed[0], failed[1], eager_raised)
        return Result("ok", "", eager_raised)
    except Exception:
        return Result("harness", traceback.format_exc())
    finally:
        unload(module)


# A program's file as a reproducer: the same source plus a main that runs
# reproduce() on it.
REPRO_MAIN = '''

if __name__ == "__main__":
    from jitamp_fuzz.runner import reproduce  # PYTHONPATH=tools, from a jitamp checkout
    reproduce(__file__)
'''


def reproduce(path: str) -> None:
    """What a reproducer does run as a script: prints eager against scripted
    (jitamp) outputs for calls 1, 2, 3, then runs the fuzzer's comparison
    (the oracle's rules) and exits 1 where it finds a difference."""
    import tempfile

    with open(path) as f:
        source = f.read()
    directory = tempfile.mkdtemp()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        profiling = _scripted_for_profiling(source)
        with jitamp_enabled(True, profiling_executor=profiling):
            module = load_source(source, directory, "repro")
            scripted = torch.jit.script(module.build())
        outer = make_outer(module.OUTER)
        eager = module.build()
        with jitamp_enabled(module.RUNTIME_JITAMP):
            for call in (1, 2, 3):
                for side, fn in (("eager", eager), ("scripted", scripted)):
                    with (outer() if outer else contextlib.nullcontext()):
                        try:
                            out = fn(*module.make_args(call))
                        except Exception as exc:  # printed: what is compared
                            print(f"call {call} {side} raised {type(exc).__name__}: {str(exc)[-300:]}")
                            continue
                    tensors = [t for t in oracle.flatten(out) if isinstance(t, torch.Tensor)]
                    print(f"call {call} {side}:", [(t.dtype, t.flatten()[:4].tolist()) for t in tensors])
        unload(module)
        result = run_source(source, directory)
    print("fuzz comparison:", result.kind)
    print(result.message)
    sys.exit(0 if result.kind == "ok" else 1)


def repro_source(source: str) -> str:
    """A program's file as a reproducer: jitamp imported before the
    program's `@torch.jit.script` helpers compile (at import: they may call
    what jitamp makes scriptable, torch.amp.is_autocast_available; seed
    112805, index 7395), and a main that runs reproduce()."""
    return re.sub(r"^import torch$", "import torch\nimport jitamp  # noqa: F401", source, count=1,
                  flags=re.M) + REPRO_MAIN
