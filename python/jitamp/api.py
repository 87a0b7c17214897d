"""The public API: enable(), disable(), rewrite(), load(), add_autocast(), freeze()."""
from __future__ import annotations

import atexit
import threading
from typing import Any, Sequence

import torch

from . import _loader, _patches, _script_caches
from ._library import _C

_lock = threading.RLock()
_state: _patches.Installed | None = None  # what enable() installed, while enabled


def is_enabled() -> bool:
    return _state is not None


class _Enabled:
    """Returned by enable(): also a context manager that disables on exit."""

    def __enter__(self) -> "_Enabled":
        return self

    def __exit__(self, *exc: object) -> None:
        disable()


def enable(*, profiling_executor: bool = False) -> _Enabled:
    """Rewrite every function and module scripted from now on.

    Installs TorchScript's emit hooks (chaining to hooks already there) and
    turns PyTorch's built-in JIT autocast off until disable(). Idempotent.
    Usable as `with jitamp.enable(): ...`. TorchScript has one slot for emit
    hooks; while jitamp is enabled, hooks that other code sets there
    (`torch._C._jit_set_emit_hooks`, e.g. PyTorch's JitTestCase) run after
    jitamp's rewrite instead of displacing it. Functions and methods
    decorated with `@torch.autocast(...)` script too (TorchScript refuses
    them, or drops the decorator on a method), as if their body were inside
    the same `with torch.autocast(...)` (jitamp/_decorators.py); so do
    early `return`, `break` and `continue` around autocast blocks
    (jitamp/_early_exits.py). Functions and modules traced with
    `torch.jit.trace` keep the autocast blocks they run (jitamp/_tracing.py).
    jitamp/_patches.py lists what enable() changes in torch.

    Rewritten functions run on TorchScript's simple executor, which records
    each op with eager's autograd, so gradients are eager's.
    `profiling_executor=True` leaves the executor to TorchScript (the
    profiling one: profile-guided optimizations, fusers, symbolic
    autodiff; or the legacy one where the process turned it off): faster
    in some inference workloads. Its symbolic autodiff casts no gradient
    between ops of different dtypes; jitamp ends a differentiable
    subgraph wherever a low-precision value meets another tensor, so
    eager's engine casts those, but gradients of a value read several
    times in one subgraph are summed in another order than eager's (low
    bits may differ). Its optimizations change some errors too, as in
    plain TorchScript (an in-place op on a view of a differentiable
    subgraph's result, `out=` forms with grad); its split of `addmm` into
    `mm` + `add` (rounding twice) jitamp prevents.
    """
    global _state
    _patches.install_on_first_use()
    with _lock:
        if _state is not None:
            return _Enabled()
        simple = not profiling_executor
        _state = _patches.Installed(_patches.while_enabled(
            on_module=lambda module: _loader.rewrite_module(module, simple),
            on_function=lambda function: _loader.rewrite_function(function, simple),
            lock=_lock,
        ))
        _script_caches.forget_compiled_types()
        return _Enabled()


def disable() -> None:
    """Undo enable(): restore the previous hooks and built-in JIT autocast.

    Graphs already rewritten stay rewritten (they still need `import jitamp`).
    """
    global _state
    with _lock:
        if _state is None:
            return
        _state.uninstall()
        _state = None
        _script_caches.forget_compiled_types()


# A Python emit hook left installed crashes the interpreter at exit.
atexit.register(disable)


def rewrite(obj: Any, *, profiling_executor: bool = False) -> list[str]:
    """Rewrite a scripted function or module (and what it calls) in place.

    For objects scripted before enable(), or loaded with torch.jit.load.
    Idempotent. Raises if a graph that needs the rewrite has already run:
    TorchScript's executor keeps the graph it compiled at the first call.
    `profiling_executor`: see enable(). A module also gets the loader
    object that makes it load exactly with torch.jit.load (see load()); a
    function gets it when torch.jit.save saves it (as a module whose
    forward is the function).
    Returns the qualified names of the functions whose graphs changed.
    """
    _patches.install_on_first_use()
    simple = not profiling_executor
    target = obj._c if isinstance(obj, torch.jit.ScriptModule) else obj
    if isinstance(target, torch._C.ScriptModule):
        return _loader.rewrite_module(target, simple)
    if isinstance(target, torch._C.ScriptFunction):
        return _loader.rewrite_function(target, simple)
    raise TypeError(
        "jitamp.rewrite expects a scripted function or module "
        f"(torch.jit.script / torch.jit.load), got {type(obj).__name__}"
    )


_AUTOCAST_DTYPES = {torch.bfloat16: "bfloat16", torch.float16: "float16"}


def has_autocast(device_type: str) -> bool:
    """Eager's torch.amp.is_autocast_available, False for a string that
    names no device type (what add_autocast and `jitamp convert --autocast`
    accept)."""
    try:
        return torch.amp.is_autocast_available(device_type)
    except RuntimeError:
        return False


def add_autocast(
    module: Any,
    device_type: str,
    dtype: torch.dtype,
    *,
    methods: Sequence[str] = ("forward",),
    profiling_executor: bool = False,
) -> list[str]:
    """Mixed precision for a scripted or loaded module whose source has no
    autocast: each of `methods` runs as if its body were inside
    `with torch.autocast(device_type, dtype=dtype):` (scopes it already has
    stay, nested inside), so calling it equals calling the original module
    under that eager autocast. Then rewrite(); returns what rewrite() does.
    Call it before the module's first call (`jitamp convert --autocast`
    does this to a saved model)."""
    if not has_autocast(device_type):
        raise ValueError(f"device_type is a device type with autocast (cpu, cuda, xpu, ...; "
                         f"torch.amp.is_autocast_available), not {device_type!r}")
    if dtype not in _AUTOCAST_DTYPES:
        raise ValueError(f"dtype is torch.bfloat16 or torch.float16, not {dtype}")
    target = module._c if isinstance(module, torch.jit.ScriptModule) else module
    if not isinstance(target, torch._C.ScriptModule):
        raise TypeError(f"jitamp.add_autocast expects a scripted or loaded module, got {type(module).__name__}")
    missing = [name for name in methods if not target._has_method(name)]
    if missing:
        raise ValueError(f"the module has no method {', '.join(map(repr, missing))}")
    for name in methods:
        _C.wrap_method_in_autocast(target, name, device_type, _AUTOCAST_DTYPES[dtype])
    return rewrite(module, profiling_executor=profiling_executor)


def freeze(module: Any, *, preserved_attrs: Sequence[str] | None = None,
           optimize_numerics: bool = True, profiling_executor: bool = False,
           standalone: bool = False) -> Any:
    """torch.jit.freeze for inference (an eval module), after rewrite().

    The frozen copy runs as rewrite() says and is exact for callers in any
    autocast state. Each cast of a frozen weight inside a scope whose device
    type, dtype and enabled flag are constants is done once, now, by eager's
    cast (a constant in the graph; no cast per call), and a cast of a weight
    that does nothing there is removed; casts whose state depends on the
    caller stay (docs/frozen.md). An op of frozen
    weights alone whose result the autocast state may change with no cast
    in the graph (a reflect pad, whose reflection_pad1d eager's CPU autocast
    runs in float32) is done once only where every state it may run in
    gives the same bits; otherwise it runs at each call, as in eager
    (docs/frozen.md, "Fold barriers"). torch.jit.freeze and
    torch.jit.optimize_for_inference of a module jitamp rewrote do the same;
    this also takes a module scripted without jitamp (rewritten first, which
    needs it not to have run).

    standalone=True: a frozen model without any jitamp op, which runs in a
    stock LibTorch or torch.jit.load without jitamp, exact for callers whose
    autocast is off (a caller's autocast reaches its ops as it reaches any
    stock TorchScript model). An `addmm` whose beta and alpha are 1 reads
    beta from a module attribute (`_unsplit_addmm_beta_<type>`), so that the
    stock profiling executor does not split it into `mm` + `add`, rounding
    twice; a method with an `mm` starts with a never-taken in-place write to
    a module attribute (`_unbatched_mm_guard`), so that the stock executors
    do not batch its `mm` ops into one, summing in another order. (Every
    frozen jitamp model reads a tensor constant that loading's constant
    pooling would merge with an equal one laid out otherwise from a module
    attribute, `_pooled_apart_constant_<n>`.) Freezing the model again
    would undo these. Raises ValueError,
    saying why, unless every
    scope is a CPU scope with constant dtype and enabled and every op in it
    can do without one (strip_static_scopes.h).
    """
    if not isinstance(module, torch.jit.ScriptModule):
        raise TypeError(f"jitamp.freeze expects a scripted or loaded module, got {type(module).__name__}")
    if module.training:
        raise ValueError("jitamp.freeze freezes modules for inference: call .eval() first")
    rewrite(module, profiling_executor=profiling_executor)
    if not standalone:
        return torch.jit.freeze(module, preserved_attrs=preserved_attrs, optimize_numerics=optimize_numerics)
    # torch's own freeze (no loader object: it would need jitamp to load)
    frozen = _loader.plain_freeze(module, preserved_attrs=preserved_attrs, optimize_numerics=optimize_numerics)
    if frozen._c.hasattr(_loader.ATTRIBUTE):
        raise ValueError("jitamp.freeze(standalone=True): the module's methods use its jitamp loader object")
    # the standalone_freeze pipeline (csrc/jit_autocast/pipeline/pipeline.h)
    _C.freeze_standalone(frozen._c, simple_executor=not profiling_executor)
    return frozen


def load(f: Any, *, profiling_executor: bool = False, **kwargs: Any) -> Any:
    """torch.jit.load, then rewrite().

    A model rewritten by jitamp and saved needs neither: it carries a
    loader object that configures it while any loader (torch.jit.load after
    `import jitamp`, torch::jit::load linked with jitamp_ops) loads it. Use
    load() for models saved without jitamp (it rewrites them, e.g. to run
    their autocast scopes as eager does) or to choose `profiling_executor`
    (see enable()). kwargs go to torch.jit.load."""
    module = torch.jit.load(f, **kwargs)
    rewrite(module, profiling_executor=profiling_executor)
    return module
