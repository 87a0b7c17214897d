"""A TorchScript graph run op by op in Python, for torch.export to trace
(jitamp.export; docs/exporting.md).

`run(graph, inputs, hooks)` does what TorchScript's interpreter does with the
graph: each node's op is called through the dispatcher (`torch.ops`) with
the node's inputs, control flow (`prim::If`, `prim::Loop`) and containers
(lists, tuples, dicts) are Python's own, and values are kept as TorchScript
keeps them (a dtype as its integer code, as TorchScript's ops take and give
it). torch.export, tracing the run, records the tensor ops; branches and
loops are decided as Python's are when it traces an eager module (a shape
decides, a tensor's value cannot).

Attribute reads and writes of the modules the caller gives as values, and
the ops the caller runs itself (jitamp's scope ops), go to `hooks`. An
error names the node's source line (InterpreterError).
"""
from __future__ import annotations

import builtins
import functools
import math
import operator
import types
import warnings
from typing import Any, Callable, Sequence

import torch

from ._written_out import WRITTEN_OUT


class InterpreterError(RuntimeError):
    """An op that failed, with the node and its source line."""

    def __init__(self, message: str, node: torch._C.Node):
        super().__init__(message)
        self.node = node


def source_line(node: torch._C.Node) -> str:
    text = node.sourceRange()
    return text if text.strip() else f"(no source line) {node.kind()}\n"


class Hooks:
    """What `run` asks its caller: attribute reads and writes of modules
    (values the caller gave as modules), and ops by kind (`ops`)."""

    ops: dict[str, Callable[..., Any]] = {}

    def is_module(self, value: Any) -> bool:
        return False

    def get_attribute(self, module: Any, name: str) -> Any:
        raise NotImplementedError

    def set_attribute(self, module: Any, name: str, value: Any) -> None:
        raise NotImplementedError


def run(graph: torch._C.Graph, inputs: Sequence[Any], hooks: Hooks) -> Any:
    """The graph's output for `inputs` (its first the module, where it is a
    method's graph): one value, or a tuple where the graph returns several."""
    outputs = _Run(hooks).block(graph.block(), list(inputs))
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


# ---------------------------------------------------------------------------
# Ops TorchScript's interpreter runs itself (torch/csrc/jit/runtime/register_prim_ops.cpp and the
# like): containers, Python scalars, tensor metadata. Called with the node's
# inputs; each returns the node's output (a tuple where it has several).

def _raise(message: str, class_name: str | None = None, *_: Any) -> None:
    name = (class_name or "builtins.RuntimeError").rpartition(".")[2]
    error = getattr(builtins, name, None)
    if not (isinstance(error, type) and issubclass(error, Exception)):
        error = RuntimeError
    raise error(message)


def _set_item(container: Any, key: Any, value: Any) -> None:
    container[key] = value


def _append(items: list, value: Any) -> list:
    items.append(value)
    return items


def _extend(items: list, more: list) -> None:
    items.extend(more)


def _insert(items: list, index: int, value: Any) -> None:
    items.insert(index, value)


def _pop(container: Any, *key: Any) -> Any:
    return container.pop(*key)


def _range_length(low: int, high: int, step: int) -> int:
    if step == 0:
        raise RuntimeError("range() arg 3 must not be zero")
    return max(0, (high - low + step - (1 if step > 0 else -1)) // step)


def _format(template: str, *values: Any) -> str:
    return template.format(*values)


def _size(tensor: torch.Tensor, dim: int | None = None) -> Any:
    return list(tensor.size()) if dim is None else tensor.size(dim)


def _length(value: Any) -> int:
    return value.size(0) if isinstance(value, torch.Tensor) else len(value)


def _num_to_tensor(value: Any) -> torch.Tensor:
    dtype = torch.float64 if isinstance(value, (float, torch.SymFloat)) else (
        torch.bool if isinstance(value, bool) else torch.int64)
    return torch.scalar_tensor(value, dtype=dtype)


def _to_int(value: Any) -> int:
    return int(value.item()) if isinstance(value, torch.Tensor) else int(value)


def _to_float(value: Any) -> float:
    return float(value.item()) if isinstance(value, torch.Tensor) else float(value)


def _to_bool(value: Any) -> bool:
    return bool(value.item()) if isinstance(value, torch.Tensor) else bool(value)


def _to_scalar(value: torch.Tensor) -> Any:
    return value.item()


def _divide(a: Any, b: Any) -> float:
    return a / b


def _remainder(a: Any, b: Any) -> Any:
    return a % b


def _power(a: Any, b: Any) -> Any:
    return float(a) ** b if isinstance(a, int) and isinstance(b, int) else a ** b


def _from_data(make: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
    """aten::tensor / aten::as_tensor of a Python list or number (their
    generic `t` data the dispatcher's Python binding cannot take)."""
    def from_data(data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> torch.Tensor:
        dtype = as_dtype(dtype) if dtype is not None else None
        made = make(data, dtype=dtype, device=device)
        return made.requires_grad_() if requires_grad else made
    return from_data


def _min(*values: Any) -> Any:
    return min(values[0]) if len(values) == 1 else min(values)


def _max(*values: Any) -> Any:
    return max(values[0]) if len(values) == 1 else max(values)


_PRIM_OPS: dict[str, Callable[..., Any]] = {
    "prim::ListConstruct": lambda *v: list(v),
    "prim::ListUnpack": lambda v: tuple(v),
    "prim::TupleConstruct": lambda *v: tuple(v),
    "prim::TupleUnpack": lambda v: tuple(v),
    "prim::TupleIndex": operator.getitem,
    "prim::DictConstruct": lambda *v: dict(zip(v[::2], v[1::2])),
    "prim::CreateObject": types.SimpleNamespace,
    "prim::unchecked_cast": lambda v: v,
    "prim::Uninitialized": lambda: None,
    "prim::RaiseException": _raise,
    "prim::dtype": lambda t: as_ivalue(t.dtype),
    "prim::device": lambda t: t.device,
    "prim::layout": lambda t: _layout_code(t.layout),
    "prim::requires_grad": lambda t: t.requires_grad,
    "prim::is_cuda": lambda t: t.is_cuda,
    "prim::is_cpu": lambda t: t.is_cpu,
    "prim::is_meta": lambda t: t.is_meta,
    # read from the dtype, as Python's methods do (an op in the program
    # otherwise, which torch 2.6 cannot load: it returns a bool)
    "aten::is_floating_point": lambda t: t.is_floating_point(),
    "aten::is_complex": lambda t: t.is_complex(),
    "prim::NumToTensor": _num_to_tensor,
    "prim::min": _min,
    "prim::max": _max,
    "prim::abs": abs,
    "aten::__getitem__": operator.getitem,
    "aten::_set_item": _set_item,
    "aten::append": _append,
    "aten::extend": _extend,
    "aten::insert": _insert,
    "aten::pop": _pop,
    "aten::len": _length,
    "aten::list": list,
    "aten::copy": lambda v: v.copy(),
    "aten::dict": lambda *v: dict(*v),
    "aten::keys": lambda d: list(d.keys()),
    "aten::values": lambda d: list(d.values()),
    "aten::items": lambda d: [tuple(item) for item in d.items()],
    "aten::get": lambda d, key, default=None: d.get(key, default),
    "aten::__contains__": lambda container, key: key in container,
    "aten::__is__": operator.is_,
    "aten::__isnot__": operator.is_not,
    "aten::__not__": operator.not_,
    "aten::__range_length": _range_length,
    "aten::__derive_index": lambda index, start, step: start + index * step,
    "aten::format": _format,
    "aten::str": str,
    "aten::warn": lambda message, *_: warnings.warn(message, stacklevel=3),
    "aten::size": _size,
    "aten::sym_size": _size,
    "aten::dim": lambda t: t.dim(),
    "aten::numel": lambda t: t.numel(),
    "aten::Int": _to_int,
    "aten::Float": _to_float,
    "aten::Bool": _to_bool,
    "aten::ScalarImplicit": _to_scalar,
    "aten::item": _to_scalar,
}
# Ops whose overloads on Python data (not a tensor) TorchScript runs itself.
_DATA_OPS: dict[str, Callable[..., Any]] = {
    "aten::tensor": _from_data(torch.tensor),
    "aten::as_tensor": _from_data(torch.as_tensor),
}

# Scalar ops (no tensor in or out) as Python computes them: with symbolic
# sizes (dynamic_shapes) their operands are SymInts, which the dispatcher's
# int arguments would fix to the example's values.
_SCALAR_OPS: dict[str, Callable[..., Any]] = {
    "aten::add": operator.add,
    "aten::sub": operator.sub,
    "aten::mul": operator.mul,
    "aten::div": _divide,
    "aten::floordiv": operator.floordiv,
    "aten::remainder": _remainder,
    "aten::pow": _power,
    "aten::neg": operator.neg,
    "aten::eq": operator.eq,
    "aten::ne": operator.ne,
    "aten::lt": operator.lt,
    "aten::le": operator.le,
    "aten::gt": operator.gt,
    "aten::ge": operator.ge,
    "aten::__and__": operator.and_,
    "aten::__or__": operator.or_,
    "aten::__xor__": operator.xor,
    "aten::abs": abs,
    "aten::ceil": math.ceil,
    "aten::floor": math.floor,
    "aten::sqrt": math.sqrt,
    "aten::slice": lambda items, start=None, end=None, step=1: items[start:end:step],
}


# prim::dtype's codes (c10::ScalarType), read from the op itself
_DTYPES = [getattr(torch, name) for name in (
    "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64", "complex64",
    "complex128", "bool", "bfloat16", "float8_e5m2", "float8_e4m3fn", "uint16", "uint32", "uint64")
    if hasattr(torch, name)]


@functools.lru_cache(maxsize=None)
def dtype_codes() -> dict[torch.dtype, int]:
    """Each dtype's code, as prim::dtype gives it (asked once, not when
    jitamp is imported; a caller asks before torch.export traces `run`,
    which would record the tensors that ask)."""
    return {dtype: torch.ops.prim.dtype(torch.empty(0, dtype=dtype, device="meta")) for dtype in _DTYPES}


@functools.lru_cache(maxsize=None)
def _dtypes_by_code() -> dict[int, torch.dtype]:
    return {code: dtype for dtype, code in dtype_codes().items()}


def as_ivalue(value: Any) -> Any:
    """`value` as TorchScript's interpreter holds it: a dtype as its code."""
    if isinstance(value, torch.dtype):
        return dtype_codes()[value]
    if isinstance(value, list):
        return [as_ivalue(item) for item in value]
    return value


def as_dtype(code: int | torch.dtype) -> torch.dtype:
    return code if isinstance(code, torch.dtype) else _dtypes_by_code()[code]


def _layout_code(layout: torch.layout) -> int:
    """c10::Layout's code, as prim::layout gives it."""
    return {torch.strided: 0, torch.sparse_coo: 1, torch.sparse_csr: 2, torch._mkldnn: 3,
            torch.sparse_csc: 4, torch.sparse_bsr: 5, torch.sparse_bsc: 6}[layout]


class _Run:
    def __init__(self, hooks: Hooks):
        self.hooks = hooks
        self.values: dict[torch._C.Value, Any] = {}

    def block(self, block: torch._C.Block, inputs: list[Any]) -> list[Any]:
        for value, given in zip(block.inputs(), inputs):
            self.values[value] = given
        for node in block.nodes():
            self.node(node)
        return [self.values[value] for value in block.outputs()]

    def node(self, node: torch._C.Node) -> None:
        kind = node.kind()
        outputs = list(node.outputs())
        if kind == "prim::Constant":
            self.values[outputs[0]] = _constant(node)
            return
        inputs = [self.values[value] for value in node.inputs()]
        try:
            if kind == "prim::If":
                result = tuple(self.block(list(node.blocks())[0 if inputs[0] else 1], []))
            elif kind == "prim::Loop":
                result = tuple(self.loop(node, inputs))
            elif kind == "prim::GetAttr":
                result = self.get_attribute(inputs[0], node.s("name"))
            elif kind == "prim::SetAttr":
                result = self.set_attribute(inputs[0], node.s("name"), inputs[1])
            elif kind in self.hooks.ops:
                result = self.hooks.ops[kind](node, *inputs)
            elif kind in _PRIM_OPS:
                result = _PRIM_OPS[kind](*inputs)
            elif kind in _SCALAR_OPS and not _has_tensors(node):
                result = _SCALAR_OPS[kind](*inputs)
            elif kind in _DATA_OPS and not isinstance(inputs[0], torch.Tensor):
                result = _DATA_OPS[kind](*inputs)
            elif kind in WRITTEN_OUT:  # an op whose kernel autocast reaches inside
                result = WRITTEN_OUT[kind](*inputs)
            else:
                result = _call(node, inputs)
                if _may_return_a_dtype(node):
                    result = as_ivalue(result)
        except InterpreterError:
            raise
        except Exception as error:
            raise InterpreterError(f"{kind}: {type(error).__name__}: {error}", node) from error
        if kind in ("prim::If", "prim::Loop", "prim::ListUnpack", "prim::TupleUnpack"):
            self.values.update(zip(outputs, result))
        elif len(outputs) == 1:
            self.values[outputs[0]] = result
        elif outputs:
            for value, item in zip(outputs, result):
                self.values[value] = item

    def loop(self, node: torch._C.Node, inputs: list[Any]) -> list[Any]:
        trips, condition, *carried = inputs
        (body,) = node.blocks()
        index = 0
        while condition and index < trips:
            condition, *carried = self.block(body, [index, *carried])
            index += 1
        return carried

    def get_attribute(self, owner: Any, name: str) -> Any:
        if self.hooks.is_module(owner):
            return self.hooks.get_attribute(owner, name)
        return getattr(owner, name)

    def set_attribute(self, owner: Any, name: str, value: Any) -> None:
        if self.hooks.is_module(owner):
            self.hooks.set_attribute(owner, name, value)
        else:
            setattr(owner, name, value)


def _constant(node: torch._C.Node) -> Any:
    output = node.output()
    if node.hasAttribute("value") and node.kindOf("value") == "t":
        return node.t("value")
    if output.type().kind() in ("FunctionType", "ClassType"):
        return None  # read only by calls (inlined away) and class checks
    return output.toIValue()


def _is_tensor(type_: Any) -> bool:
    if type_.kind() == "OptionalType":
        type_ = type_.getElementType()
    return type_.kind() == "TensorType"


def _has_tensors(node: torch._C.Node) -> bool:
    return any(_is_tensor(value.type()) for value in (*node.inputs(), *node.outputs()))


def _may_return_a_dtype(node: torch._C.Node) -> bool:
    """TorchScript types a dtype as int; the dispatcher gives torch.dtype."""
    return any(value.type().kind() == "IntType" for value in node.outputs())


_OPS: dict[str, tuple[Any, int, tuple[str, ...]]] = {}

# Overloads TorchScript calls with a number that eager Python never calls:
# native_functions.yaml has them "for C++ only", and Python passes the
# number to the Tensor overload as a wrapped number. Same kernel, same
# bits; but a compiler lowers the two differently (Inductor: a division by
# 8.0 as div.Scalar and as div.Tensor are other bits), so the program
# records what eager's export records. Arguments in the same order.
_AS_PYTHON_CALLS = {
    "add.Scalar": "add.Tensor", "add_.Scalar": "add_.Tensor",
    "sub.Scalar": "sub.Tensor", "sub_.Scalar": "sub_.Tensor",
    "mul.Scalar": "mul.Tensor", "mul_.Scalar": "mul_.Tensor",
    "div.Scalar": "div.Tensor", "div_.Scalar": "div_.Tensor",
    "div.Scalar_mode": "div.Tensor_mode", "div_.Scalar_mode": "div_.Tensor_mode",
    "floor_divide.Scalar": "floor_divide.default", "floor_divide_.Scalar": "floor_divide_.Tensor",
}


def _call(node: torch._C.Node, inputs: list[Any]) -> Any:
    """The node's op through the dispatcher, with the schema's keyword-only
    arguments as keywords."""
    schema_text = node.schema()
    if schema_text == "(no schema)":
        raise RuntimeError(f"{node.kind()} is not an op jitamp.export can run")
    op = _OPS.get(schema_text)
    if op is None:
        schema = torch._C.parse_schema(schema_text)
        namespace, _, name = schema.name.partition("::")
        overload_name = schema.overload_name or "default"
        if namespace == "aten":
            name, _, overload_name = _AS_PYTHON_CALLS.get(f"{name}.{overload_name}",
                                                          f"{name}.{overload_name}").partition(".")
        overload = getattr(getattr(getattr(torch.ops, namespace), name), overload_name)
        arguments = overload._schema.arguments
        positional = sum(1 for argument in arguments if not argument.kwarg_only)
        keywords = tuple(argument.name for argument in arguments if argument.kwarg_only)
        op = _OPS[schema_text] = (overload, positional, keywords)
    overload, positional, keywords = op
    return overload(*inputs[:positional], **dict(zip(keywords, inputs[positional:])))
