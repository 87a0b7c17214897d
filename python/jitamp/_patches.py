"""Every change jitamp makes to torch's Python namespace, installed and undone here.

Each entry replaces an attribute by a wrapper of what was there (the
wrappers are written where their work is, named by `make`) or changes one
setting; each has install() and uninstall(), which puts back what was
there, and `because`: the PyTorch behaviour it answers. No other module of
jitamp assigns to torch (tests/test_package.py checks).

Three lists. The first two are installed once and never undone (a model
rewritten earlier needs them as long as it lives):
- AT_IMPORT, by install_at_import() at `import jitamp`: the wrappers of
  torch.jit.freeze and optimize_for_inference alone. They are functions a
  user calls, and Python fetches the function before it evaluates its
  arguments: in `torch.jit.freeze(torch.jit.load(path))` the load of a
  jitamp model is jitamp's first use, too late for a wrapper installed then
  (the frozen copy would raise at its first call). A module jitamp has not
  rewritten freezes as torch freezes it.
- ON_FIRST_USE, by install_on_first_use(), which enable(), rewrite() (so
  load(), freeze() and add_autocast()) and export() call: what jitamp's
  rewrite and scripting need, each read by torch when it is used, never
  fetched ahead by a user.

The third, while_enabled(), holds while jitamp is enabled: enable() installs
it in its order, disable() uninstalls it in the reverse order (at the
interpreter's exit too, since a Python emit hook left installed crashes it).
"""
from __future__ import annotations

import builtins
import threading
from typing import Any, Callable, Iterable, Protocol

import torch
import torch.jit._builtins
import torch.jit._recursive
import torch.jit._trace
import torch.jit.frontend
from torch import _jit_internal
from torch.amp.autocast_mode import autocast as _autocast
from torch.jit import _freeze

from . import _decorators, _early_exits, _loader, _script_caches, _tracing


class Patch(Protocol):
    because: str  # the PyTorch behaviour it answers

    def install(self) -> None: ...

    def uninstall(self) -> None: ...


_ABSENT = object()


class Replace:
    """`owner.name` replaced by `make(original)`; `also`: other owners that
    hold the same original get the same replacement (torch.jit re-exports
    torch.jit._freeze's functions).

    once: where jitamp's replacement is there already (jitamp imported
    again), install() leaves it. always_restore: uninstall() puts the
    original back even where other code has replaced the replacement since;
    otherwise only where the replacement is still there (a name that was
    absent is deleted)."""

    def __init__(self, owner: Any, name: str, make: Callable[[Any], Any], *, because: str,
                 also: Iterable[Any] = (), once: bool = False, always_restore: bool = False) -> None:
        self.owner, self.name, self.make, self.because = owner, name, make, because
        self.also, self.once, self.always_restore = tuple(also), once, always_restore
        self.installed_in: list[Any] = []

    def install(self) -> None:
        current = getattr(self.owner, self.name, _ABSENT)
        if self.once and getattr(current, "_jitamp_patch", False):
            return
        self.original = current
        self.replacement = self.make(self.original)
        if self.once:
            self.replacement._jitamp_patch = True
        self.installed_in = [self.owner] + [owner for owner in self.also
                                            if getattr(owner, self.name, _ABSENT) is self.original]
        for owner in self.installed_in:
            setattr(owner, self.name, self.replacement)

    def uninstall(self) -> None:
        for owner in self.installed_in:
            if self.always_restore or getattr(owner, self.name, _ABSENT) is self.replacement:
                if self.original is _ABSENT:
                    delattr(owner, self.name)
                else:
                    setattr(owner, self.name, self.original)
        self.installed_in = []

    def __repr__(self) -> str:
        owner = getattr(self.owner, "__qualname__", None) or getattr(self.owner, "__name__", repr(self.owner))
        return f"Replace({owner}.{self.name})"


class BuiltinJitAutocastOff:
    """PyTorch's built-in JIT autocast off, as it was again after."""

    because = "PyTorch's built-in JIT autocast pass would cast again inside the graphs jitamp rewrote"

    def install(self) -> None:
        self.previous = torch._C._jit_set_autocast_mode(False)

    def uninstall(self) -> None:
        torch._C._jit_set_autocast_mode(self.previous)


class EmitHooks:
    """TorchScript's emit hooks (one slot) while jitamp is enabled.

    The slot holds jitamp's hooks, which run `on_module` / `on_function`
    (the rewrite) on each module and function scripted, then the hooks
    other code wants run: those the slot held before install(), or those
    set since with torch._C._jit_set_emit_hooks (e.g. PyTorch's
    JitTestCase), which no longer displaces jitamp's. What
    torch._C._jit_get_emit_hooks returns stands for the chain installed at
    that moment: setting it back restores exactly that chain (as
    torch._jit_internal._disable_emit_hooks does: save, set none, restore).
    uninstall() puts back torch's two functions and, in the slot, the hooks
    other code wants run."""

    because = ("TorchScript's one slot for emit hooks is the only place that sees each function and module "
               "as it is scripted, and a hook other code sets there displaces the one it held")

    def __init__(self, on_module: Callable[[Any], Any], on_function: Callable[[Any], Any],
                 lock: threading.RLock) -> None:
        self.on_module, self.on_function = on_module, on_function
        self.lock = lock
        self.installed = False
        self.others: tuple[Any, Any] = (None, None)
        self.mine = self._chain(lambda: self.others if self.installed else (None, None))

    def _chain(self, others: Callable[[], tuple[Any, Any]]) -> tuple[Any, Any]:
        """Hooks that run the rewrite (while installed), then the hooks
        `others()` gives."""

        def module_hook(module: torch._C.ScriptModule) -> None:
            if self.installed:  # a pair kept past disable() runs the others alone
                self.on_module(module)
            other = others()[0]
            if other is not None:
                other(module)

        def function_hook(function: torch._C.ScriptFunction) -> None:
            if self.installed:
                self.on_function(function)
            other = others()[1]
            if other is not None:
                other(function)

        return module_hook, function_hook

    def install(self) -> None:
        self.get, self.set = torch._C._jit_get_emit_hooks, torch._C._jit_set_emit_hooks
        self.others = self.get()  # what other code wants run, after the rewrite
        self.installed = True
        self.set(*self.mine)
        torch._C._jit_set_emit_hooks = self._set_emit_hooks
        torch._C._jit_get_emit_hooks = self._get_emit_hooks

    def uninstall(self) -> None:
        torch._C._jit_set_emit_hooks = self.set
        torch._C._jit_get_emit_hooks = self.get
        self.set(*self.others)
        self.installed = False

    def _get_emit_hooks(self) -> tuple[Any, Any]:
        """torch._C._jit_get_emit_hooks while installed: hooks that run the
        chain installed now (the rewrite, then the others of this moment),
        which _set_emit_hooks recognizes."""
        with self.lock:
            assert self.installed
            others = self.others
            module_hook, function_hook = self._chain(lambda: others)
            module_hook.jitamp_chain = (others, function_hook)  # type: ignore[attr-defined]
            return module_hook, function_hook

    def _set_emit_hooks(self, module_hook: Any, function_hook: Any) -> None:
        """torch._C._jit_set_emit_hooks while installed: the hooks run after
        jitamp's; a pair _get_emit_hooks gave brings back its chain."""
        with self.lock:
            assert self.installed
            chain = getattr(module_hook, "jitamp_chain", None)
            if chain is not None and chain[1] is function_hook:
                self.others = chain[0]
            else:
                self.others = (module_hook, function_hook)


class ScriptedAsBuiltin:
    """`owner.name`, a Python function, compiles in scripted code to the
    builtin op `op` (an entry of torch.jit._builtins' table, as torch's own
    functions have)."""

    def __init__(self, owner: Any, name: str, op: str, *, because: str) -> None:
        self.owner, self.name, self.op, self.because = owner, name, op, because
        self.function: Any = None

    def install(self) -> None:
        self.function = getattr(self.owner, self.name, None)
        if self.function is None:  # not in this torch
            return
        table = torch.jit._builtins._get_builtin_table()
        self.previous = table.get(id(self.function))
        table[id(self.function)] = self.op

    def uninstall(self) -> None:
        if self.function is None:
            return
        table = torch.jit._builtins._get_builtin_table()
        if self.previous is None:
            table.pop(id(self.function), None)
        else:
            table[id(self.function)] = self.previous
        self.function = None

    def __repr__(self) -> str:
        return f"ScriptedAsBuiltin({self.owner.__name__}.{self.name} -> {self.op})"


class Installed:
    """Patches installed in order (or none, where one fails to install);
    uninstall() undoes them in the reverse order."""

    def __init__(self, patches: Iterable[Patch]) -> None:
        self.patches: list[Patch] = []
        try:
            for patch in patches:
                patch.install()
                self.patches.append(patch)
        except BaseException:
            self.uninstall()
            raise

    def uninstall(self) -> None:
        while self.patches:
            self.patches.pop().uninstall()


def _scope_op(op: str) -> Callable[[Any], Any]:
    return lambda _absent: getattr(torch.ops.jitamp, op)


AT_IMPORT: tuple[Patch, ...] = (
    Replace(_freeze, "freeze", _loader.freezing_rewritten, also=[torch.jit], once=True,
            because="torch.jit.freeze's copy of a module runs with TorchScript's defaults (executor, built-in "
            "JIT autocast), not as jitamp configured the original, and casts frozen weights at every call"),
    Replace(_freeze, "optimize_for_inference", _loader.optimizing_rewritten, also=[torch.jit], once=True,
            because="torch.jit.optimize_for_inference freezes (as torch.jit.freeze) and then runs passes of its "
            "own, which must see each weight behind its cast: they run inside jitamp's pipeline, between the "
            "rewrite and the fold"),
)

ON_FIRST_USE: tuple[Patch, ...] = (
    Replace(torch._C.ScriptFunction, "save", _loader.saving_with_a_loader, once=True,
            because="torch.jit.save saves a function as a module without attributes, so no loader learns "
            "how to run it: a function jitamp rewrote is saved with its loader object"),
    Replace(torch._C.ScriptFunction, "save_to_buffer", _loader.saving_with_a_loader, once=True,
            because="as ScriptFunction.save"),
    Replace(_jit_internal, "_clear_fn_overloads", _script_caches.keeping_declarations, once=True,
            because="TorchScript deletes a function's @overload declarations once it compiled them, so what "
            "was compiled before enable() or after disable() could not be compiled again"),
    ScriptedAsBuiltin(torch.amp, "is_autocast_available", "aten::_is_autocast_available",
                      because="TorchScript cannot compile torch.amp.is_autocast_available, a Python function "
                      "(csrc/jit_autocast/ops/query_ops.cpp registers it and the other autocast queries "
                      "eager has and TorchScript lacks)"),
    Replace(torch._ops, "_refresh_packet", _script_caches.keeping_replaced_ops, once=True,
            because="TorchScript's table of builtins, keyed by id(), keeps the entry of an op object a "
            "refreshed packet replaced: once it is freed, the next object at its address compiles as that "
            "op (a PyTorch bug; _script_caches.keeping_replaced_ops)"),
)


def install_at_import() -> None:
    Installed(AT_IMPORT)


_first_use = threading.Lock()
_installed_on_first_use = False


def install_on_first_use() -> None:
    """ON_FIRST_USE installed, once per process."""
    global _installed_on_first_use
    if _installed_on_first_use:
        return
    with _first_use:
        if not _installed_on_first_use:
            Installed(ON_FIRST_USE)
            _installed_on_first_use = True


def while_enabled(on_module: Callable[[Any], Any], on_function: Callable[[Any], Any],
                  lock: threading.RLock) -> list[Patch]:
    """The patches enable() installs, in order: `on_module` / `on_function`
    are what jitamp's emit hooks do."""
    return [
        BuiltinJitAutocastOff(),
        EmitHooks(on_module, on_function, lock),
        Replace(torch.jit.frontend, "parse_def", _decorators.parsing_scopes,
                because="TorchScript's frontend refuses autocast decorators and early exits (return, break, "
                "continue) from autocast blocks: they become `with` blocks and scope ops"),
        Replace(torch.jit, "script", _decorators.scripting_decorated,
                because="torch.jit.script refuses an @torch.autocast-decorated function and drops the "
                "decorator of a method"),
        *(Replace(builtins, name, _scope_op(op),
                  because="early-exit lowering writes calls of the scope ops by these names, which "
                  "TorchScript resolves from builtins")
          for op, name in _early_exits.SCOPE_OPS.items()),
        Replace(_autocast, "__enter__", _tracing.recording_enter,
                because="torch.jit.trace records the ops an autocast block runs, not the block"),
        Replace(_autocast, "__exit__", _tracing.recording_exit, because="as autocast.__enter__"),
        *(Replace(owner, name, _tracing.marking,
                  because="autocast.__enter__ / __exit__ record a block only on a thread that traces")
          for owner in (torch.jit, torch.jit._trace) for name in ("trace", "trace_module")),
        Replace(torch.jit._recursive, "create_script_module_impl", _loader.filling_loader_slots,
                always_restore=True,
                because="torch.jit.script reuses a type compiled before for a new module object without "
                "running the emit hooks, so the object's loader slot would stay empty"),
    ]
