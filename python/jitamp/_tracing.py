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

Only traces taken by `torch.jit.trace` / `torch.jit.trace_module` (patched
while jitamp is enabled to mark their thread; jitamp/_patches.py installs
the replacements written here) record scopes: other users of
the tracer (the TorchScript-based ONNX exporter, TensorBoard's add_graph)
get the trace they always got.
"""
from __future__ import annotations

import functools
import threading
from typing import Any, Callable

import torch
from torch.amp.autocast_mode import autocast as _autocast

_ENTER = "jitamp::autocast_enter"
_EXIT = "jitamp::autocast_exit"
_STACK = "_jitamp_traced_scopes"  # per autocast object: guards of its open traced blocks


class _Tracing(threading.local):
    depth = 0  # torch.jit.trace / trace_module calls running on this thread


_tracing = _Tracing()


def _recording() -> torch._C.TracingState | None:
    """The tracing state to record scopes into, or None."""
    if _tracing.depth == 0 or torch._jit_internal.is_scripting():
        return None
    return torch._C._get_tracing_state()


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


def marking(trace: Callable[..., Any]) -> Callable[..., Any]:
    """torch.jit.trace / trace_module while jitamp is enabled
    (jitamp/_patches.py): marks the thread as tracing for them, so that
    only their traces record scopes."""

    @functools.wraps(trace)
    def marked(*args: Any, **kwargs: Any) -> Any:
        _tracing.depth += 1
        try:
            return trace(*args, **kwargs)
        finally:
            _tracing.depth -= 1

    return marked


def recording_enter(enter: Callable[..., Any]) -> Callable[..., Any]:
    """torch's autocast `__enter__` while jitamp is enabled
    (jitamp/_patches.py): eager's, then jitamp's autocast_enter recorded
    into the trace being taken, if any."""

    @functools.wraps(enter)
    def traced_enter(scope: _autocast) -> Any:
        result = enter(scope)
        state = _recording()
        if state is not None:
            scope.__dict__.setdefault(_STACK, []).append((state.graph(), _record_enter(state.graph(), scope)))
        return result

    return traced_enter


def recording_exit(exit_: Callable[..., Any]) -> Callable[..., Any]:
    """torch's autocast `__exit__` while jitamp is enabled: the
    autocast_exit of the block's recorded enter, then eager's."""

    @functools.wraps(exit_)
    def traced_exit(scope: _autocast, *exc: Any) -> Any:
        recorded = scope.__dict__.get(_STACK)
        if recorded and _recording() is not None:
            graph, guard = recorded.pop()
            _record_exit(graph, guard)
        return exit_(scope, *exc)

    return traced_exit
