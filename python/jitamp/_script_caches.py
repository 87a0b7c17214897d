"""TorchScript's caches of what it compiled, emptied by enable() and disable().

TorchScript reuses a module type (and a scripted function) it compiled
earlier without calling the emit hooks again; clearing its caches makes
scripting after enable() or disable() go through the hooks. The compiled
`@overload`s of a function (F.interpolate's) are forgotten only where
their declarations are kept (keeping_declarations): TorchScript deletes the
declarations when it compiles them, and could never compile them again.
"""
from __future__ import annotations

from typing import Any, Callable

import torch
from torch import _jit_internal

# qualified name -> the `@torch.jit._overload` declarations TorchScript
# compiled (and then deleted), so that forget_compiled_types can give them
# back for a fresh compilation.
_overload_declarations: dict[str, list[Any]] = {
    name: list(fns) for name, fns in _jit_internal._overloaded_fns.items()
}


def forget_compiled_types() -> None:
    """Make torch.jit.script compile again what it compiled before."""
    torch.jit._recursive.concrete_type_store.type_store.clear()
    torch.jit._state._jit_caching_layer.clear()
    compiled = torch.jit._state._jit_function_overload_caching
    for fn in list(compiled.keys()):
        name = _jit_internal._qualified_name(fn)
        if name in _overload_declarations:
            _jit_internal._overloaded_fns[name] = list(_overload_declarations[name])
            del compiled[fn]


def keeping_declarations(clear: Callable[[str], None]) -> Callable[[str], None]:
    """torch._jit_internal._clear_fn_overloads, for jitamp/_patches.py: the
    declarations it deletes are kept first."""

    def clear_but_keep(qual_name: str) -> None:
        _overload_declarations[qual_name] = list(_jit_internal._overloaded_fns.get(qual_name, ()))
        clear(qual_name)

    return clear_but_keep


# The op objects packet refreshes replaced (keeping_replaced_ops).
_replaced_ops: list[Any] = []


def keeping_replaced_ops(refresh: Callable[[Any], None]) -> Callable[[Any], None]:
    """torch._ops._refresh_packet, for jitamp/_patches.py: the op object the
    packet held is kept alive.

    TorchScript's table of builtins (torch.jit._builtins) is keyed by id():
    each op object torch.ops makes is registered there, and a refresh
    (torch.library defining another overload of an op whose packet exists;
    importing torch.ao.quantization does, and torch.export and Inductor
    import it) replaces the packet's op object but not its entry. Once the
    old object is freed, the next object Python allocates at its address is
    that op for TorchScript: a 4-tuple module attribute (Conv2d's
    `_reversed_padding_repeated_twice`) compiled as a builtin function
    ("builtin cannot be used as a value"), with or without jitamp. Kept
    alive, its address is never reused (tests/test_package.py)."""

    def refreshing(packet: Any) -> None:
        _replaced_ops.append(getattr(packet, "_op", None))
        refresh(packet)

    return refreshing
