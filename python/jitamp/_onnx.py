"""jitamp.export_onnx: a TorchScript model (or jitamp.export's program with
explicit casts) as an ONNX model with eager autocast's casts, which
onnxruntime loads and runs (docs/exporting.md, "ONNX").

ONNX types every input of most ops alike; eager's kernels take mixed
ones. The program is the explicit-casts form (every cast eager's autocast
makes is an op), and where a norm's kernel takes a low-precision input
with float32 weights (LayerNorm's, GroupNorm's: computed in float32,
written in the input's dtype), its input is cast up and its output back
down, which keeps eager's result. The fast path's attention
(_native_multi_head_attention, one op with a kernel of its own that ONNX
has no function for) is written out as the ops it computes, in its
input's dtype. torch.onnx's exporter is run without its graph optimizer,
which folds a cast of a weight into a float32 initializer the cast's
consumer then refuses (a Conv with a float16 input and float32
weights)."""
from __future__ import annotations

import math
import operator
from typing import Any

import torch

from ._export import ExportError, _region_nodes, export

_LOW = (torch.float16, torch.bfloat16)

# The norms whose eager kernels take a low-precision input with float32
# weights, and which ONNX types alike: (op, the weight argument's index).
_MIXED_NORMS = {torch.ops.aten.native_layer_norm.default: 2, torch.ops.aten.native_group_norm.default: 1}


def export_onnx(model: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None, *,
                dynamic_shapes: Any = None, **onnx_kwargs: Any) -> Any:
    """`model` (a TorchScript model jitamp.export takes, or an
    ExportedProgram jitamp.export made with explicit_casts=True) as a
    torch.onnx.ONNXProgram (`.save(path)`), traced with `args` / `kwargs`
    under torch.no_grad(). Raises ExportError where jitamp.export does, and
    for a program that still holds autocast regions."""
    kwargs = kwargs or {}
    if isinstance(model, torch.export.ExportedProgram):
        if _region_nodes(model):
            raise ExportError("jitamp.export_onnx: the program holds autocast regions, which ONNX cannot; "
                              "export it with jitamp.export(..., explicit_casts=True)")
        program = model
    else:
        with torch.no_grad():
            program = export(model, args, kwargs, explicit_casts=True, dynamic_shapes=dynamic_shapes)
    if any(node.target is _ATTENTION for node in program.graph.nodes):
        program = program.run_decompositions({_ATTENTION: _attention})
    module = program.module()
    if _cast_mixed_norms(module):
        module.recompile()
        with torch.no_grad():
            program = torch.export.export(module, tuple(args), kwargs, dynamic_shapes=dynamic_shapes,
                                          strict=False)
    onnx_kwargs.setdefault("optimize", False)
    return torch.onnx.export(program, tuple(args), kwargs=kwargs, dynamo=True, **onnx_kwargs)


def _cast_mixed_norms(module: torch.fx.GraphModule) -> int:
    """Each norm with a low-precision input and float32 weights computed
    in float32, its output cast back to the input's dtype (the number of
    norms changed)."""
    graph, changed = module.graph, 0
    for node in list(graph.nodes):
        weight_index = _MIXED_NORMS.get(node.target)
        if weight_index is None:
            continue
        source, weight = node.args[0], node.args[weight_index]
        dtype = _dtype(source, module)
        if dtype not in _LOW or weight is None or _dtype(weight, module) != torch.float32:
            continue
        with graph.inserting_before(node):
            up = graph.call_function(torch.ops.aten._to_copy.default, (source,), {"dtype": torch.float32})
        node.replace_input_with(source, up)
        for user in list(node.users):
            if user.target is not operator.getitem or user.args[1] != 0:
                continue  # (mean and rstd are float32 in eager too)
            with graph.inserting_after(user):
                down = graph.call_function(torch.ops.aten._to_copy.default, (user,), {"dtype": dtype})
            user.replace_all_uses_with(down, delete_user_cb=lambda use: use is not down)
        changed += 1
    return changed


_ATTENTION = torch.ops.aten._native_multi_head_attention.default


def _attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, embed_dim: int,
               num_head: int, qkv_weight: torch.Tensor, qkv_bias: torch.Tensor,
               proj_weight: torch.Tensor, proj_bias: torch.Tensor, mask: torch.Tensor | None = None,
               need_weights: bool = True, average_attn_weights: bool = True,
               mask_type: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """aten::_native_multi_head_attention on dense inputs as ONNX's ops,
    in the order its CPU kernel computes: the q, k, v projections, bias
    added and q scaled by 1/sqrt(head size), q k^T, softmax, times v, the
    output projection; the weights averaged over heads where asked."""
    if mask is not None:
        raise ExportError("jitamp.export_onnx: the fast path's attention with a mask "
                          "(_native_multi_head_attention) is not written out for ONNX")
    batch, length, _ = query.shape
    head = embed_dim // num_head

    def heads(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        x = torch.nn.functional.linear(x, weight) + bias
        return x.view(batch, -1, num_head, head).transpose(1, 2)

    (w_q, w_k, w_v), (b_q, b_k, b_v) = qkv_weight.chunk(3), qkv_bias.chunk(3)
    q = heads(query, w_q, b_q) * (1.0 / math.sqrt(head))
    k, v = heads(key, w_k, b_k), heads(value, w_v, b_v)
    weights = torch.softmax(q @ k.transpose(-1, -2), dim=-1)
    context = (weights @ v).transpose(1, 2).reshape(batch, length, embed_dim)
    out = torch.nn.functional.linear(context, proj_weight, proj_bias)
    if not need_weights:
        return out, out.new_empty(0)
    return out, weights.mean(dim=1) if average_attn_weights else weights


def _dtype(node: Any, module: torch.fx.GraphModule) -> torch.dtype | None:
    if not isinstance(node, torch.fx.Node):
        return None
    value = operator.attrgetter(node.target)(module) if node.op == "get_attr" else node.meta.get("val")
    return value.dtype if isinstance(value, torch.Tensor) else None


__all__ = ["export_onnx"]
