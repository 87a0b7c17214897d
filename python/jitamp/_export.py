"""jitamp.export: a scripted or loaded model, autocast scopes included, as a
torch.export ExportedProgram (docs/exporting.md).

jitamp.export takes an independent copy of the model, rewritten by jitamp,
inlines its forward and runs the "export" pipeline on it
(csrc/jit_autocast/pipeline/pipeline.h: each scope's enter op with its
arguments, no smart casts). torch.export then traces a module that runs
that graph op by op in Python (_interpreter.py) with the model's
parameters and buffers as its own: each scope's enter and exit do what
`with torch.autocast(...)` does, which torch.export records as its own
autocast region (the `wrap_with_autocast` higher-order op), and TorchScript's
control flow and containers are Python's, decided as eager's are when
torch.export traces an eager module. With `explicit_casts=True` the regions
are then traced once more under eager's autocast, so every cast eager's
autocast makes is an op of the program and no region is left.
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import io
import threading
import warnings
from typing import Any, Iterator

import torch

from . import _interpreter, _patches
from ._library import _C
from .passes import graph_nodes

_ENTER = "jitamp::autocast_enter"
_EXIT = "jitamp::autocast_exit"
_AUTOCAST_DTYPE_QUERY = "aten::get_autocast_dtype"
_GRAD_MODE = "aten::is_grad_enabled"
_CACHE_FLAG = "aten::is_autocast_cache_enabled"


class ExportError(ValueError):
    """What torch.export cannot express, with the source line it comes from."""


def export(model: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None, *,
           explicit_casts: bool = False, **export_kwargs: Any) -> Any:
    """`model` (a module or function scripted with or without jitamp, or
    loaded with torch.jit.load / jitamp.load) as a
    torch.export.ExportedProgram of its forward, traced with `args` /
    `kwargs` (export_kwargs, `dynamic_shapes=` among them, go to
    torch.export.export; strict=False unless given). `ep.module()(*args)`
    gives eager autocast's result. `model` is not changed.

    Each autocast scope becomes torch.export's autocast region; with
    `explicit_casts=True` the program has no regions but every cast that
    eager's autocast makes written out as an op (fixed to this torch's
    autocast policy, for backends that do not run autocast regions): an
    inference program, exported under torch.no_grad().

    Raises ExportError, naming the source line, for what export cannot hold:
    an autocast argument known only at run time (export fixes a region's
    device type, dtype, enabled and cache flags when it traces), forks, a
    branch or loop decided by a tensor's values, and what torch.export
    cannot trace. A scope without dtype= gets the thread's dtype now (a
    UserWarning names it and the line). Raises RuntimeError on a torch
    without torch.export's autocast regions. Details: docs/exporting.md."""
    _check_torch()
    _patches.install_on_first_use()
    if explicit_casts and torch.is_grad_enabled():
        raise ExportError(
            "jitamp.export: explicit casts make an inference program (torch.export's ATen-level "
            "trace, under no_grad: its gradients are not eager's); export it under torch.no_grad(), "
            "or keep the regions (explicit_casts=False) for a program to train")
    copy = _rewritten_copy(model)
    graph = _export_graph(copy)
    _check_exportable(graph)
    module = _program(copy, graph)
    export_kwargs.setdefault("strict", False)
    try:
        with _regions_left_on_error():
            program = torch.export.export(module, tuple(args), kwargs, **export_kwargs)
            if explicit_casts:
                program = _with_explicit_casts(module, program, tuple(args), kwargs or {}, export_kwargs)
    except ExportError:
        raise
    except Exception as error:
        raise _untraceable(error) from error
    _warn_of_grad_mode_reads(module)
    return program


def export_graph(model: Any) -> torch._C.Graph:
    """The forward graph jitamp.export runs (`jitamp dump --export`)."""
    return _export_graph(_rewritten_copy(model)).copy()


def _export_graph(copy: Any) -> torch._C.Graph:
    graph = copy._c._get_method("forward").graph
    _C.export_graph(graph)  # the export pipeline (csrc/jit_autocast/pipeline/pipeline.h)
    return graph


# ---------------------------------------------------------------------------
# What this torch offers

@functools.lru_cache(maxsize=None)
def _check_torch() -> None:
    """RuntimeError where torch.export cannot hold autocast regions: no
    wrap_with_autocast, or a non-strict trace that does not record the
    region (its ops would then silently run in float32)."""
    try:
        from torch._higher_order_ops.wrap import wrap_with_autocast  # noqa: F401
    except ImportError as error:
        raise RuntimeError(
            f"jitamp.export needs torch.export's autocast regions (wrap_with_autocast), which "
            f"torch {torch.__version__} lacks ({error})") from None

    class Probe(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            with torch.autocast("cpu", dtype=torch.bfloat16):
                return torch.mm(x, x)

    try:
        program = torch.export.export(Probe(), (torch.ones(2, 2),), strict=False)
        kept = any(node.target is torch.ops.higher_order.wrap_with_autocast
                   for node in program.graph.nodes)
    except Exception:
        kept = False
    if not kept:
        raise RuntimeError(
            f"jitamp.export needs torch.export to keep autocast regions when it traces non-strict, "
            f"which torch {torch.__version__} does not (it came after wrap_with_autocast)")


# ---------------------------------------------------------------------------
# The copy and its checks

def _rewritten_copy(model: Any) -> Any:
    """A copy of `model` that shares nothing with it (saved and loaded),
    rewritten by jitamp."""
    from .api import rewrite

    if not isinstance(model, (torch.jit.ScriptModule, torch.jit.ScriptFunction)):
        raise TypeError(f"jitamp.export expects a scripted or loaded module or function, "
                        f"got {type(model).__name__}")
    buffer = io.BytesIO()
    try:
        torch.jit.save(model, buffer)
    except RuntimeError as error:  # what TorchScript cannot save, named with its line
        if "Could not export Python function call" not in str(error):
            raise
        raise ExportError("jitamp.export: the model has what torch.export cannot hold:\n- a call of "
                          "Python code TorchScript does not compile (@torch.jit.ignore), at\n"
                          + str(error).split("\n", 2)[-1]) from None
    buffer.seek(0)
    copy = torch.jit.load(buffer)
    copy.train(model.training if isinstance(model, torch.jit.ScriptModule) else False)
    rewrite(copy)
    return copy


_where = _interpreter.source_line


def _is_constant(value: torch._C.Value) -> bool:
    return value.node().kind() == "prim::Constant"


def _check_exportable(graph: torch._C.Graph) -> None:
    """ExportError for every node of the export pipeline's graph that
    export cannot hold, with its source line."""
    problems = []
    for node in graph_nodes(graph):
        kind = node.kind()
        if kind == _ENTER:
            problems += _scope_problems(node, graph)
        elif kind.startswith("jitamp::") and kind != _EXIT:
            problems.append((node, f"{kind} has no torch.export form"))
        elif kind in ("prim::fork", "prim::awaitable"):
            problems.append((node, "torch.export takes no forks (torch.jit.fork)"))
        elif kind == "prim::PythonOp":
            problems.append((node, "a call of Python code TorchScript does not compile "
                                   "(@torch.jit.ignore) has no torch.export form here"))
    if problems:
        raise ExportError("jitamp.export: the model has what torch.export cannot hold:\n" + "".join(
            f"- {why}, at\n{_where(node)}" for node, why in problems))


def _from_the_call(value: torch._C.Value, graph: torch._C.Graph) -> bool:
    """Whether `value` depends on an argument of the call (not the module):
    torch.export would fix it to the example's."""
    module = next(iter(graph.inputs())).unique()  # (the copy is a module: forward's self)
    seen, todo = set(), [value]
    while todo:
        value = todo.pop()
        if value.unique() in seen:
            continue
        seen.add(value.unique())
        producer = value.node()
        if producer.kind() == "prim::Param":  # an argument, or a block's (a loop-carried value)
            if value.unique() != module:
                return True
            continue
        todo += list(producer.inputs())
    return False


def _scope_problems(enter: torch._C.Node, graph: torch._C.Graph) -> list[tuple[torch._C.Node, str]]:
    inputs = list(enter.inputs())
    if len(inputs) == 1:
        return [(enter, "an autocast scope whose autocast object is used otherwise "
                        "than by the scope (its arguments are not known before it runs)")]
    names = ("device_type", "dtype", "enabled", "cache_enabled")
    problems = []
    for name, value in zip(names, inputs):
        producer = value.node()
        if (name == "dtype" and producer.kind() == _AUTOCAST_DTYPE_QUERY
                and all(_is_constant(v) for v in producer.inputs())):
            device = inputs[0].toIValue() if _is_constant(inputs[0]) else None
            if _is_constant(inputs[2]) and not inputs[2].toIValue():
                continue  # a disabled scope: no dtype matters
            if device is not None:
                warnings.warn(
                    f"jitamp.export: an autocast scope without dtype= runs in "
                    f"{torch.get_autocast_dtype(device)}, the thread's {device} autocast dtype now "
                    f"(torch.export fixes it when it traces, as for an eager module; eager reads it "
                    f"when the scope runs), at\n{_where(enter)}", UserWarning, stacklevel=4)
            continue
        if _from_the_call(value, graph):
            problems.append((enter, f"the autocast scope's {name} is known only at run time "
                                    f"(torch.export fixes it when it traces; make it a constant "
                                    f"or a module attribute)"))
    return problems


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _untraceable(error: Exception) -> ExportError:
    """ExportError for a failed trace, naming the node that failed and its
    source line where the interpreter ran it."""
    cause: BaseException | None = error
    while cause is not None and not isinstance(cause, _interpreter.InterpreterError):
        cause = cause.__cause__ or cause.__context__
    first = _first_line(error)
    if cause is None:
        return ExportError(f"jitamp.export: torch.export cannot trace the model: {first}")
    inner = cause.__cause__ or cause
    detail = str(inner).strip().splitlines()
    return ExportError(
        f"jitamp.export: torch.export cannot trace the model: {cause.node.kind()}: "
        f"{type(inner).__name__}: {detail[0] if detail else ''}, at\n{_where(cause.node)}")


# ---------------------------------------------------------------------------
# The module torch.export traces

class _ModuleRef:
    """A module of the model, as the graph's values hold it."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def child(self, attribute: str) -> str:
        return f"{self.name}.{attribute}" if self.name else attribute


class _Shared(list):
    """A list that torch.export's copies of the module share."""

    def __deepcopy__(self, memo: dict) -> "_Shared":
        return self


class _Program(torch.nn.Module, _interpreter.Hooks):
    """Runs the export graph (_interpreter.run) with the model's parameters
    and buffers, registered here under the model's names, so torch.export
    lifts them as it lifts an eager module's."""

    def __init__(self, copy: Any, graph: torch._C.Graph, signature: inspect.Signature):
        super().__init__()
        self.__dict__["_graph"] = graph
        self.__dict__["_scripted"] = dict(copy.named_modules())
        self._tensors: set[str] = set()
        # the model's tensors by identity -> (the tensor, its first name):
        # a tied weight is one parameter here, under each of its names, and
        # a list attribute holding parameters (nn.LSTM's _flat_weights)
        # reads them
        self.__dict__["_names"] = {}
        self.training = copy.training
        for name, submodule in copy.named_modules():
            if name:
                owner_name, _, leaf = name.rpartition(".")
                self.get_submodule(owner_name).add_module(leaf, torch.nn.Module())
            owner = self.get_submodule(name)
            owner.training = submodule.training
            for leaf, parameter in submodule.named_parameters(recurse=False):
                made = self._known(parameter)
                owner.register_parameter(leaf, made if made is not None else torch.nn.Parameter(
                    parameter.detach(), requires_grad=parameter.requires_grad))
                self._add(parameter, f"{name}.{leaf}" if name else leaf)
            for leaf, buffer in submodule.named_buffers(recurse=False):
                made = self._known(buffer)
                owner.register_buffer(leaf, made if made is not None else buffer.detach())
                self._add(buffer, f"{name}.{leaf}" if name else leaf)
        self._register_other_tensor_attributes(graph)
        self.ops = {_ENTER: self._enter, _EXIT: self._exit, _GRAD_MODE: self._grad_mode,
                    _CACHE_FLAG: self._cache_flag}
        # the cache flag eager would read: the caller's, then each region's
        # (torch.export traces with the cache off)
        self.cache_flags = _Shared([torch.is_autocast_cache_enabled()])
        self.grad_mode_reads = _Shared()
        self.__dict__["_signature"] = signature
        self.__dict__["_dispatch"] = contextlib.nullcontext  # (_dispatching_as_eager below autocast)
        _interpreter.dtype_codes()  # (asked here, before torch.export traces)

    def _known(self, tensor: torch.Tensor) -> torch.Tensor | None:
        """This module's tensor for one of the model's registered already."""
        known = self._names.get(id(tensor))
        return self._state(known[1]) if known is not None else None

    def _add(self, tensor: torch.Tensor, name: str) -> None:
        self._names.setdefault(id(tensor), (tensor, name))
        self._tensors.add(name)

    def _state(self, name: str) -> torch.Tensor:
        """The tensor registered under `name` (torch.export swaps it while it traces)."""
        owner, _, leaf = name.rpartition(".")
        return getattr(self.get_submodule(owner), leaf)

    def _register_other_tensor_attributes(self, graph: torch._C.Graph) -> None:
        """Tensor attributes the graph reads that are neither parameters nor
        buffers (plain tensor attributes of a scripted module): buffers here,
        not saved in the state dict, as torch.export takes a tensor constant."""
        names = {list(graph.inputs())[0]: ""} if list(graph.inputs()) else {}
        for node in graph_nodes(graph):
            if node.kind() != "prim::GetAttr" or node.input() not in names:
                continue
            owner = names[node.input()]
            name = node.s("name")
            full = f"{owner}.{name}" if owner else name
            value = getattr(self._scripted[owner], name)
            if isinstance(value, torch.jit.ScriptModule):
                names[node.output()] = full
            elif isinstance(value, torch.Tensor) and full not in self._tensors:
                made = self._known(value)
                self.get_submodule(owner).register_buffer(
                    name, made if made is not None else value.detach(), persistent=False)
                self._add(value, full)

    def run(self, *args: Any, **kwargs: Any) -> Any:
        bound = self._signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        with self._dispatch():
            return _interpreter.run(self._graph, [_ModuleRef(""), *bound.args[1:]], self)

    # _interpreter.Hooks
    def is_module(self, value: Any) -> bool:
        return isinstance(value, _ModuleRef)

    def get_attribute(self, module: _ModuleRef, name: str) -> Any:
        full = module.child(name)
        if full in self._tensors:
            return getattr(self.get_submodule(module.name), name)
        value = getattr(self._scripted[module.name], name)
        if isinstance(value, torch.jit.ScriptModule):
            return _ModuleRef(full)
        if isinstance(value, (list, tuple)):  # a list of parameters reads this module's
            value = type(value)(self._state(self._names[id(item)][1])
                                if isinstance(item, torch.Tensor) and id(item) in self._names else item
                                for item in value)
        return _interpreter.as_ivalue(value)

    def set_attribute(self, module: _ModuleRef, name: str, value: Any) -> None:
        if module.child(name) not in self._tensors:
            raise RuntimeError(f"the model sets its attribute {module.child(name)!r}, which a "
                               f"torch.export program cannot hold (it holds tensors as state)")
        setattr(self.get_submodule(module.name), name, value)

    def _enter(self, node: torch._C.Node, device: str, dtype: Any, enabled: bool,
               cache_enabled: bool | None) -> tuple[torch.autocast, int]:
        dtype = _interpreter.as_dtype(dtype) if dtype is not None else None
        self.cache_flags.append(self.cache_flags[-1] if cache_enabled is None else cache_enabled)
        return _region_enter(device, dtype, enabled, cache_enabled), 0

    def _exit(self, node: torch._C.Node, region: torch.autocast) -> None:
        self.cache_flags.pop()
        _region_exit(region)

    def _cache_flag(self, node: torch._C.Node) -> bool:
        return self.cache_flags[-1]

    def _grad_mode(self, node: torch._C.Node) -> bool:
        self.grad_mode_reads.append(node)
        return torch.is_grad_enabled()


def _warn_of_grad_mode_reads(module: _Program) -> None:
    """A model that reads the grad mode (nn.MultiheadAttention's fast path,
    say) is traced in the grad mode of the call to jitamp.export, and the
    program keeps what that decided (as torch.export of an eager module
    does): said, since eager decides it at each call."""
    if module.grad_mode_reads:
        mode = "on" if torch.is_grad_enabled() else "off (torch.no_grad())"
        warnings.warn(
            f"jitamp.export: the model reads torch.is_grad_enabled(); the program keeps what it "
            f"decided with grad mode {mode}, as in this call of jitamp.export, whatever the grad "
            f"mode it is called in (eager decides at each call; export under the grad mode the "
            f"program will run in), at\n{_where(module.grad_mode_reads[0])}", UserWarning, stacklevel=3)


def _program(copy: Any, graph: torch._C.Graph) -> _Program:
    """A _Program whose forward has the model's signature: torch.export
    binds `dynamic_shapes` (and the example's kwargs) by its names."""
    arguments = copy.forward.schema.arguments[1:]
    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)] + [
        inspect.Parameter(argument.name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                          default=(_interpreter.as_ivalue(argument.default_value)
                                   if argument.has_default_value() else inspect.Parameter.empty))
        for argument in arguments]

    def forward(self: _Program, *args: Any, **kwargs: Any) -> Any:
        return self.run(*args, **kwargs)

    forward.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    program_class = type("ExportedTorchScript", (_Program,), {"forward": forward})
    return program_class(copy, graph, forward.__signature__)


# ---------------------------------------------------------------------------
# Regions

_open_regions = threading.local()  # .stack: the regions a trace has entered and not left


def _region_enter(device_type: str, dtype: torch.dtype | None, enabled: bool,
                  cache_enabled: bool | None) -> torch.autocast:
    """What `with torch.autocast(...)` does on entry: torch.export, tracing,
    records the region and runs what follows under its autocast state."""
    region = torch.autocast(device_type, dtype, enabled, cache_enabled)
    region.__enter__()
    _open_regions.stack.append(region)
    return region


def _region_exit(region: torch.autocast) -> None:
    _open_regions.stack.pop()
    region.__exit__(None, None, None)


@contextlib.contextmanager
def _regions_left_on_error() -> Iterator[None]:
    """A trace that fails inside a region leaves it as `with` would: the
    thread's autocast state is as it was."""
    outer = getattr(_open_regions, "stack", None)
    cache_enabled = torch.is_autocast_cache_enabled()
    _open_regions.stack = []
    try:
        yield
    finally:
        left = bool(_open_regions.stack)
        while _open_regions.stack:
            _open_regions.stack.pop().__exit__(None, None, None)
        if left:  # each restored the cache flag of the trace (off), not the caller's
            torch.set_autocast_cache_enabled(cache_enabled)
        _open_regions.stack = outer


def _with_explicit_casts(module: _Program, program: Any, args: tuple[Any, ...],
                         kwargs: dict[str, Any], export_kwargs: dict[str, Any]) -> Any:
    """The program traced again below autocast (torch.export's ATen IR,
    its pre_dispatch=False trace), each op dispatched as eager dispatches
    it (_dispatching_as_eager): each region's autocast runs as in eager, so
    every cast it makes is recorded as an op, the casts inside composite
    ops among them (einsum's bmm, gru_cell's linears, lstm's
    mkldnn_rnn_layer), and no region is left.

    An op the trace keeps whole although its kernel calls ops that eager's
    autocast casts would run without those casts (the one known,
    nn.TransformerEncoderLayer's fast path, the interpreter runs as its
    kernel written out: _written_out.py): the program is checked against
    the regions' on the example (dtypes and bits), and ExportError where
    they differ."""
    from torch.export._trace import _export

    module.__dict__["_dispatch"] = functools.partial(_dispatching_as_eager, _backend_flags())
    try:
        lowered = _export(module, args, kwargs, pre_dispatch=False, **export_kwargs)
    finally:
        module.__dict__["_dispatch"] = contextlib.nullcontext
    left = _region_nodes(lowered)
    if left:
        raise ExportError(f"jitamp.export: torch {torch.__version__} left {len(left)} autocast "
                          f"regions in the program with explicit casts")
    with torch.no_grad(), torch.random.fork_rng(), _state_kept(program, lowered):
        torch.manual_seed(0)  # (the same random numbers for both: dropout)
        expected = program.module()(*args, **kwargs)
        torch.manual_seed(0)
        try:
            difference = _first_difference(expected, lowered.module()(*args, **kwargs))
        except Exception as error:
            difference = f"it raises {type(error).__name__}: {_first_line(error)}"
    if difference:
        raise ExportError(
            f"jitamp.export: with explicit casts the program computes otherwise than eager's "
            f"autocast on the example ({difference}): an op the trace keeps whole reaches ops "
            f"eager's autocast casts (export with regions, explicit_casts=False)")
    return lowered


_BACKEND_FLAGS = ((torch._C._get_mkldnn_enabled, torch._C._set_mkldnn_enabled),
                  (torch._C._get_cudnn_enabled, torch._C._set_cudnn_enabled),
                  (torch._C._get_nnpack_enabled, torch._C._set_nnpack_enabled))


def _backend_flags() -> tuple[bool, ...]:
    return tuple(get() for get, _ in _BACKEND_FLAGS)


def _set_backend_flags(flags: tuple[bool, ...]) -> None:
    for (_, set_flag), flag in zip(_BACKEND_FLAGS, flags):
        set_flag(flag)


@contextlib.contextmanager
def _dispatching_as_eager(flags: tuple[bool, ...]) -> Iterator[None]:
    """Ops dispatched while torch.export traces below autocast as eager
    dispatches them: without the Python dispatcher (whose decompositions
    of composite ops, upsample_bilinear2d's say, are not eager's kernels'
    bits) and with the caller's mkldnn, cudnn and nnpack flags (the trace
    turns them off; nn.LSTM's kernel asks them which ops to call)."""
    saved = _backend_flags()
    _set_backend_flags(flags)
    try:
        with torch._C._DisablePythonDispatcher():
            yield
    finally:
        _set_backend_flags(saved)


@contextlib.contextmanager
def _state_kept(*programs: Any) -> Iterator[None]:
    """The programs' state (parameters, buffers, tensor constants) as it
    was before the block: the check on the example runs them, and a
    model in training mode updates BatchNorm's statistics."""
    tensors = {id(tensor): tensor for program in programs
               for tensor in (*program.state_dict.values(), *program.constants.values())
               if isinstance(tensor, torch.Tensor)}
    saved = [(tensor, tensor.clone()) for tensor in tensors.values()]
    try:
        yield
    finally:
        with torch.no_grad():
            for tensor, value in saved:
                tensor.copy_(value)


def _bits(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.detach().contiguous().reshape(-1).view(torch.uint8)


def _first_difference(expected: Any, got: Any) -> str | None:
    """Where two outputs differ in dtype or bits (None if nowhere)."""
    (left, left_spec), (right, right_spec) = map(torch.utils._pytree.tree_flatten, (expected, got))
    if left_spec != right_spec:
        return "another output structure"
    for index, (a, b) in enumerate(zip(left, right)):
        if isinstance(a, torch.Tensor):
            if a.dtype != b.dtype:
                return f"output {index}: {b.dtype} where eager gives {a.dtype}"
            if not torch.equal(_bits(a), _bits(b)):
                return f"output {index}: other values"  # (bits: NaNs alike compare equal)
        elif a != b:
            return f"output {index}: {b!r} where eager gives {a!r}"
    return None


def _region_nodes(program: Any) -> list[torch.fx.Node]:
    return [node for module in program.graph_module.modules() if isinstance(module, torch.fx.GraphModule)
            for node in module.graph.nodes if node.target is torch.ops.higher_order.wrap_with_autocast]


__all__ = ["export", "ExportError"]
