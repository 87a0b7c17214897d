"""Autocast scopes in traced code (`torch.jit.trace`).

The tracer records the ops a function runs, not the Python around them: a
`with torch.autocast(...)` block leaves no trace of itself, only the casts
eager autocast issued for the example inputs. A traced function whose block
turns autocast off then runs under its caller's autocast once called from
scripted code, and one whose block turns it on around a call of a scripted
function (which the trace records as a call) runs that call without it.

While jitamp is enabled, entering and leaving an autocast block while
tracing also records jitamp's scope ops into the trace:

    %guard, %region = jitamp::autocast_enter.args(device_type, dtype, enabled, cache_enabled)
    ...                              the block's ops, as traced
    jitamp::autocast_exit(%guard)

so the traced code sets the thread's autocast state as eager's block does,
for every caller. The scope's arguments are the values the block had while
tracing (tracing records values, not the expressions that gave them: a
block `torch.autocast("cpu")` records the dtype that was current then). The
block runs eagerly while tracing, so the casts it issues on the example
inputs are recorded too, as in any trace, and give eager's values for
inputs of those dtypes. The traced function is then rewritten like a
scripted one (the emit hooks run for traces), so its ops get smart casts
tied to the recorded scopes.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import torch
from torch.amp.autocast_mode import autocast as _autocast

_ENTER = "jitamp::autocast_enter"
_EXIT = "jitamp::autocast_exit"
_STACK = "_jitamp_traced_scopes"  # per autocast object: guards of its open traced blocks


@functools.lru_cache(maxsize=None)
def _guard_type() -> torch._C.ClassType:
    (schema,) = [s for s in torch._C._jit_get_schemas_for_operator(_ENTER) if s.overload_name == "args"]
    return schema.returns[0].type


def _record_enter(graph: torch._C.Graph, scope: _autocast) -> torch._C.Value:
    inputs = [graph.insertConstant(value) for value in (
        scope.device, scope.fast_dtype, bool(scope._enabled), bool(scope._cache_enabled))]
    node = graph.create(_ENTER, inputs, 2)
    graph.insertNode(node)
    node.outputsAt(0).setType(_guard_type())
    node.outputsAt(1).setType(torch._C.IntType.get())
    return node.outputsAt(0)


def _record_exit(graph: torch._C.Graph, guard: torch._C.Value) -> None:
    graph.insertNode(graph.create(_EXIT, [guard], 0))


class Installed:
    """The patched `__enter__` / `__exit__` of torch's autocast class, while
    jitamp is enabled; uninstall() puts torch's back."""

    def __init__(self) -> None:
        self.enter: Callable[..., Any] = _autocast.__enter__
        self.exit: Callable[..., Any] = _autocast.__exit__
        enter, exit_ = self.enter, self.exit

        @functools.wraps(enter)
        def traced_enter(scope: _autocast) -> Any:
            result = enter(scope)
            state = torch._C._get_tracing_state()
            if state is not None and not torch._jit_internal.is_scripting():
                scope.__dict__.setdefault(_STACK, []).append((state.graph(), _record_enter(state.graph(), scope)))
            return result

        @functools.wraps(exit_)
        def traced_exit(scope: _autocast, *exc: Any) -> Any:
            recorded = scope.__dict__.get(_STACK)
            if recorded and torch._C._get_tracing_state() is not None:
                graph, guard = recorded.pop()
                _record_exit(graph, guard)
            return exit_(scope, *exc)

        self.patches = {"__enter__": traced_enter, "__exit__": traced_exit}
        for name, patch in self.patches.items():
            setattr(_autocast, name, patch)

    def uninstall(self) -> None:
        originals = {"__enter__": self.enter, "__exit__": self.exit}
        for name, patch in self.patches.items():
            if _autocast.__dict__.get(name) is patch:
                setattr(_autocast, name, originals[name])
