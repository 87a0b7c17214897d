"""jitamp.export: a scripted or loaded model, autocast scopes included, as a
torch.export ExportedProgram (docs/exporting.md).

PyTorch's converter from TorchScript (torch._export.converter) drops every
autocast scope (its prim::Enter / prim::Exit are no-ops). jitamp.export
takes an independent copy of the model, rewritten by jitamp, freezes it
with its parameters kept (which inlines every call), runs the "export"
pipeline on the forward graph (csrc/jit_autocast/pipeline/pipeline.h: each
scope's enter op with its arguments, no smart casts), converts that graph
with PyTorch's converter, then makes each scope's enter and exit ops
calls that enter and exit eager's autocast as `with torch.autocast(...)`
does, which torch.export turns into its own autocast regions (the
`wrap_with_autocast` higher-order op).
The exported program runs each region under eager's autocast, as eager does.
"""
from __future__ import annotations

import contextlib
import functools
import io
import operator
import threading
import warnings
from typing import Any, Iterator

import torch

from ._library import _C
from .passes import graph_nodes

_ENTER = "jitamp::autocast_enter"
_EXIT = "jitamp::autocast_exit"
_AUTOCAST_DTYPE_QUERY = "aten::get_autocast_dtype"


class ExportError(ValueError):
    """What torch.export cannot express, with the source line it comes from."""


def export(model: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None,
           **export_kwargs: Any) -> Any:
    """`model` (a module or function scripted with or without jitamp, or
    loaded with torch.jit.load / jitamp.load) as a
    torch.export.ExportedProgram of its forward, traced with `args` /
    `kwargs` (export_kwargs go to torch.export.export; strict=False unless
    given). Each autocast scope becomes torch.export's autocast region, so
    `ep.module()(*args)` gives eager autocast's result. `model` is not
    changed.

    Raises ExportError, naming the source line, for what export cannot hold:
    an autocast argument known only at run time (export fixes a region's
    device type, dtype, enabled and cache flags when it traces), forks, and
    what PyTorch's converter or torch.export cannot take. A scope without
    dtype= gets the thread's dtype now (a UserWarning names it and the
    line). Raises RuntimeError on a torch without torch.export's autocast
    regions. Details: docs/exporting.md."""
    converter_class = _converter_class()
    frozen = _prepared(model)
    _check_exportable(frozen._get_method("forward").graph)
    module = torch.jit._recursive.wrap_cpp_module(frozen)
    trainable = {name for name, p in getattr(model, "named_parameters", lambda: ())() if p.requires_grad}
    return converter_class(module, tuple(args), kwargs).export(export_kwargs, trainable)


@functools.lru_cache(maxsize=None)
def _non_strict_export_keeps_regions() -> bool:
    """Whether torch.export, tracing non-strict, records an autocast region
    (torch versions with wrap_with_autocast but without that trace the
    region's ops without it: a program that would silently run in float32)."""

    class Probe(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            with torch.autocast("cpu", dtype=torch.bfloat16):
                return torch.mm(x, x)

    try:
        program = torch.export.export(Probe(), (torch.ones(2, 2),), strict=False)
    except Exception:
        return False
    return any(node.target is torch.ops.higher_order.wrap_with_autocast
               for node in program.graph.nodes)


def _prepared(model: Any) -> torch._C.ScriptModule:
    """The frozen copy of `model` whose forward jitamp.export converts:
    inlined, its nodes marked apart (_mark_apart), frozen with its
    parameters kept, the "export" pipeline run on it."""
    copy = _rewritten_copy(model)
    forward = copy._c._get_method("forward").graph
    torch._C._jit_pass_inline(forward)
    _mark_apart(forward)
    frozen = torch._C._freeze_module(copy._c, preserveParameters=True)
    _C.export_graph(frozen._get_method("forward").graph)
    return frozen


def export_graph(model: Any) -> torch._C.Graph:
    """The forward graph jitamp.export hands PyTorch's converter (`jitamp
    dump --export`), before the example's shapes are folded in."""
    graph = _prepared(model)._get_method("forward").graph.copy()
    _mark_apart(graph, remove=True)
    return graph


@functools.lru_cache(maxsize=None)
def _converter_class() -> type:
    """The converter, made once, or RuntimeError where torch lacks what it
    needs."""
    try:
        from torch._export import converter
        from torch._higher_order_ops.wrap import wrap_with_autocast  # noqa: F401
    except ImportError as error:
        raise RuntimeError(
            f"jitamp.export needs torch.export's autocast regions (wrap_with_autocast) and "
            f"PyTorch's TorchScript converter (torch._export.converter), which torch "
            f"{torch.__version__} lacks ({error})") from None
    if not _non_strict_export_keeps_regions():
        raise RuntimeError(
            f"jitamp.export needs torch.export to keep autocast regions when it traces non-strict, "
            f"which torch {torch.__version__} does not (it came after wrap_with_autocast)")

    class Converter(converter.TS2EPConverter):
        """PyTorch's converter (its __init__ freezes the module again and
        propagates the example's shapes), with the scope ops made region
        calls and the program traced by torch.export.export."""

        def export(self, export_kwargs: dict[str, Any], trainable: set[str]) -> Any:
            _mark_apart(self.ts_graph, remove=True)
            if export_kwargs.get("dynamic_shapes") is None:
                # static shapes: the example's, as torch.export's own default
                torch._C._jit_pass_peephole(self.ts_graph, False)
                torch._C._jit_pass_constant_propagation(self.ts_graph)
                torch._C._jit_pass_dce(self.ts_graph)
            blocks, attribute_fqns = converter.get_block_to_lifted_attrs(self.ts_graph)
            state = (self.ts_graph, self.name_to_param, self.name_to_buffer, blocks,
                     self.name_to_non_tensor_attributes, self.name_to_constant, attribute_fqns)
            graph_converter = converter.TS2FXGraphConverter(*state)
            try:
                graph_module = graph_converter.convert()
            except Exception as error:
                raise _unconvertible(converter.ExplainTS2FXGraphConverter(*state), error) from error
            _parameters_as_parameters(graph_module, self.name_to_param, trainable)
            for submodule in graph_module.modules():
                if isinstance(submodule, torch.fx.GraphModule):
                    _regions_from_scope_ops(submodule.graph, converter._TORCH_ENUM_TO_DTYPE)
                    submodule.recompile()
            export_kwargs.setdefault("strict", False)
            try:
                with _regions_left_on_error():
                    program = torch.export.export(graph_module, self.sample_args, self.sample_kwargs,
                                                  **export_kwargs)
            except Exception as error:
                raise ExportError(f"jitamp.export: torch.export cannot trace the converted model: "
                                  f"{str(error).strip().splitlines()[0]}") from error
            _constants_as_constants(program, graph_converter.name_to_constant)
            return program

    return Converter


def _unconvertible(explainer: Any, error: Exception) -> ExportError:
    """ExportError naming each node PyTorch's converter cannot convert,
    with its source line."""
    try:
        explainer.explain()
        nodes = list(explainer.unsupported_node_list)
    except Exception:
        nodes = []
    cause = str(error.__cause__ or error).strip().splitlines()
    lines = "".join(f"- {node.kind()}, at\n{_where(node)}" for node in nodes)
    return ExportError(
        f"jitamp.export: PyTorch's TorchScript converter (torch._export.converter) cannot "
        f"convert the model: {error}{': ' + cause[0] if cause else ''}\n" + lines)


def _rewritten_copy(model: Any) -> Any:
    """A copy of `model` that shares nothing with it (saved and loaded),
    rewritten by jitamp."""
    from .api import rewrite

    if not isinstance(model, (torch.jit.ScriptModule, torch.jit.ScriptFunction)):
        raise TypeError(f"jitamp.export expects a scripted or loaded module or function, "
                        f"got {type(model).__name__}")
    buffer = io.BytesIO()
    torch.jit.save(model, buffer)
    buffer.seek(0)
    copy = torch.jit.load(buffer)
    copy.train(model.training if isinstance(model, torch.jit.ScriptModule) else False)
    rewrite(copy)
    return copy


_APART = "jitamp_export_apart"


def _mark_apart(graph: torch._C.Graph, remove: bool = False) -> None:
    """Gives each node a distinct attribute (or removes it): freezing's
    common-subexpression elimination then merges no two of eager's ops
    (two `y.float()` of one value are two casts in eager's autograd graph,
    and the gradient through them is summed in their order)."""
    for index, node in enumerate(graph_nodes(graph)):
        if remove:
            if node.hasAttribute(_APART):
                node.removeAttribute(_APART)
        elif node.kind() != "prim::Constant":
            node.i_(_APART, index)


def _where(node: torch._C.Node) -> str:
    text = node.sourceRange()
    return text if text.strip() else f"(no source line) {node.kind()}\n"


def _is_constant(value: torch._C.Value) -> bool:
    return value.node().kind() == "prim::Constant"


def _check_exportable(graph: torch._C.Graph) -> None:
    """ExportError for every node of the export pipeline's graph that
    export cannot hold, with its source line."""
    problems = []
    for node in graph_nodes(graph):
        kind = node.kind()
        if kind == _ENTER:
            problems += _scope_problems(node)
        elif kind.startswith("jitamp::") and kind != _EXIT:
            problems.append((node, f"{kind} has no torch.export form"))
        elif kind in ("prim::fork", "prim::awaitable"):
            problems.append((node, "torch.export takes no forks (torch.jit.fork)"))
    if problems:
        raise ExportError("jitamp.export: the model has what torch.export cannot hold:\n" + "".join(
            f"- {why}, at\n{_where(node)}" for node, why in problems))


def _scope_problems(enter: torch._C.Node) -> list[tuple[torch._C.Node, str]]:
    inputs = list(enter.inputs())
    if len(inputs) == 1:
        return [(enter, "an autocast scope whose autocast object is used otherwise "
                        "than by the scope (its arguments are not known before it runs)")]
    names = ("device_type", "dtype", "enabled", "cache_enabled")
    problems = []
    for name, value in zip(names, inputs):
        if _is_constant(value):
            continue
        producer = value.node()
        if (name == "dtype" and producer.kind() == _AUTOCAST_DTYPE_QUERY
                and all(_is_constant(v) for v in producer.inputs())):
            device = inputs[0].toIValue()
            if _is_constant(inputs[2]) and not inputs[2].toIValue():
                continue  # a disabled scope: no dtype matters
            warnings.warn(
                f"jitamp.export: an autocast scope without dtype= runs in "
                f"{torch.get_autocast_dtype(device)}, the thread's {device} autocast dtype now "
                f"(torch.export fixes it when it traces, as for an eager module; eager reads it "
                f"when the scope runs), at\n{_where(enter)}", UserWarning, stacklevel=3)
            continue
        problems.append((enter, f"the autocast scope's {name} is known only at run time "
                                f"(torch.export fixes it when it traces; make it a constant "
                                f"or a module attribute)"))
    return problems


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


def _regions_from_scope_ops(graph: torch.fx.Graph, dtypes: dict[int, torch.dtype]) -> None:
    """The converted scope ops as calls that enter and exit eager's autocast
    (torch.export makes each region its wrap_with_autocast). `dtypes`:
    ScalarType codes (TorchScript's dtype constants) to torch dtypes."""
    enter_op = torch.ops.jitamp.autocast_enter.args
    exit_op = torch.ops.jitamp.autocast_exit.default
    dtype_query = torch.ops.aten.get_autocast_dtype.default
    for node in list(graph.nodes):
        if node.target is enter_op:
            device, dtype, enabled, cache = node.args  # TorchScript's constants: ints
            query = dtype if isinstance(dtype, torch.fx.Node) and dtype.target is dtype_query else None
            with graph.inserting_before(node):
                region = graph.call_function(_region_enter, (device, None if query else dtypes[dtype],
                                                             bool(enabled), None if cache is None else bool(cache)))
            for user in list(node.users):
                assert user.target is operator.getitem, user
                if user.args[1] == 0:
                    user.replace_all_uses_with(region)
                assert not user.users, user
                graph.erase_node(user)
            graph.erase_node(node)
            if query is not None and not query.users:
                graph.erase_node(query)
        elif node.target is exit_op:
            node.target = _region_exit


def _parameters_as_parameters(graph_module: torch.fx.GraphModule,
                              name_to_param: dict[str, torch.Tensor], trainable: set[str]) -> None:
    """The model's parameters as the graph module's (fx.GraphModule makes
    every tensor it is given a buffer), so that the program's are too,
    requiring grad where the model's do (`trainable`)."""
    for name, tensor in name_to_param.items():
        owner_name, _, leaf = name.rpartition(".")
        owner = graph_module.get_submodule(owner_name)
        if isinstance(getattr(owner, leaf, None), torch.nn.Parameter):
            continue
        delattr(owner, leaf)
        owner.register_parameter(leaf, torch.nn.Parameter(tensor, requires_grad=name in trainable))


def _constants_as_constants(program: Any, name_to_constant: dict[str, Any]) -> None:
    """Tensor constants of the graph are the program's constants, not
    buffers (retracing takes a graph module's tensor attributes for
    buffers)."""
    from torch.export.graph_signature import InputKind

    constants = {k: v for k, v in name_to_constant.items()
                 if isinstance(v, (torch.Tensor, torch.ScriptObject))}
    if not constants:
        return
    program._constants.update(constants)
    for name in constants:
        program.state_dict.pop(name, None)
    for spec in program.graph_signature.input_specs:
        if spec.kind == InputKind.BUFFER and spec.target in constants:
            spec.kind = InputKind.CONSTANT_TENSOR
            spec.persistent = None


__all__ = ["export", "ExportError"]
