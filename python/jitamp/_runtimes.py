"""jitamp.export_onnx and jitamp.export_executorch: a TorchScript model (or
jitamp.export's program with explicit casts) for runtimes with kernels of
their own, with eager autocast's casts (docs/exporting.md, "ONNX and
ExecuTorch").

Both runtimes take a program of core ATen ops whose inputs share a dtype.
The explicit-casts form holds every cast eager's autocast makes as an op;
what is left to do is the same for both, and done once here:

- eager's norm kernels take a low-precision input with float32 weights
  (LayerNorm, GroupNorm, BatchNorm: computed in float32, written in the
  input's dtype). ONNX types such inputs alike and ExecuTorch's kernels
  check it, so the input is cast up and the output back down, which keeps
  eager's bits (in eager's kernels);
- the ops with a kernel of their own that are not core ATen: the fast
  path's attention (_native_multi_head_attention) and feed-forward block
  (_addmm_activation), and oneDNN's LSTM layer (mkldnn_rnn_layer), written
  out as the ops they compute, in their kernel's order and dtypes (the
  feed-forward block to the bit; oneDNN's LSTM and the attention's fused
  softmax are code of their own, which the ops approach).
"""
from __future__ import annotations

import math
import operator
from typing import Any

import torch

from ._export import ExportError, _region_nodes, export

aten = torch.ops.aten
_LOW = (torch.float16, torch.bfloat16)

# The norms whose eager kernels take a low-precision input beside float32
# weights or statistics; their first output is the normalized input.
_MIXED_NORMS = (aten.native_layer_norm.default, aten.native_group_norm.default,
                aten._native_batch_norm_legit_no_training.default)


def export_onnx(model: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None, *,
                dynamic_shapes: Any = None, **onnx_kwargs: Any) -> Any:
    """`model` (a TorchScript model jitamp.export takes, or an
    ExportedProgram jitamp.export made with explicit_casts=True) as a
    torch.onnx.ONNXProgram (`.save(path)`), traced with `args` / `kwargs`
    under torch.no_grad(). Raises ExportError where jitamp.export does, for a
    program that still holds autocast regions, and where the ONNX graph is
    not valid ONNX (bfloat16 into a Conv, which ONNX's Conv does not take),
    rather than give a model no runtime loads."""
    import onnx

    program = _same_dtype_program(model, args, kwargs, dynamic_shapes, "jitamp.export_onnx")
    # torch.onnx's graph optimizer folds a weight's cast into a float32
    # initializer the cast's consumer then refuses (a float16 Conv).
    onnx_kwargs.setdefault("optimize", False)
    onnx_program = torch.onnx.export(program, tuple(args), kwargs=kwargs or {}, dynamo=True, **onnx_kwargs)
    try:
        onnx.checker.check_model(onnx_program.model_proto, full_check=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as error:
        raise ExportError(f"jitamp.export_onnx: the model is not valid ONNX: {str(error).strip().splitlines()[0]} "
                          "(ONNX's Conv and SplitToSequence take no bfloat16: autocast to float16 for ONNX)") from error
    return onnx_program


def export_executorch(model: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None, *,
                      dynamic_shapes: Any = None, partitioner: Any = None) -> Any:
    """`model` (as export_onnx takes it) as ExecuTorch's program:
    `to_edge_transform_and_lower(...).to_executorch()` of the program with
    eager's casts, an ExecutorchProgramManager (`.buffer`,
    `.write_to_file(f)`), run by executorch.runtime or ExecuTorch's C++
    runtime. `partitioner` goes to to_edge_transform_and_lower (XNNPACK's,
    say); without one every op runs on ExecuTorch's portable kernels."""
    from executorch.exir import to_edge_transform_and_lower

    program = _same_dtype_program(model, args, kwargs, dynamic_shapes, "jitamp.export_executorch")
    return to_edge_transform_and_lower(program, partitioner=partitioner).to_executorch()


def _same_dtype_program(model: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None,
                        dynamic_shapes: Any, caller: str) -> torch.export.ExportedProgram:
    """The explicit-casts program of `model`, with the mixed-dtype norms
    computed in float32 and the kernels neither runtime has written out."""
    kwargs = kwargs or {}
    if isinstance(model, torch.export.ExportedProgram):
        if _region_nodes(model):
            raise ExportError(f"{caller}: the program holds autocast regions, which this runtime cannot "
                              "run; export it with jitamp.export(..., explicit_casts=True)")
        program = model
    else:
        with torch.no_grad():
            program = export(model, args, kwargs, explicit_casts=True, dynamic_shapes=dynamic_shapes)
    written_out = {op: kernel for op, kernel in _WRITTEN_OUT.items()
                   if any(node.target is op for node in program.graph.nodes)}
    if written_out:
        with torch.no_grad():
            program = program.run_decompositions(written_out)
    module = program.module()
    if _cast_mixed_norms(module):
        module.recompile()
        with torch.no_grad():
            program = torch.export.export(module, tuple(args), kwargs, dynamic_shapes=dynamic_shapes,
                                          strict=False)
    return program


def _cast_mixed_norms(module: torch.fx.GraphModule) -> int:
    """Each norm with a low-precision input and float32 weights or
    statistics computed in float32, its output cast back to the input's
    dtype (the number of norms changed)."""
    graph, changed = module.graph, 0
    for node in list(graph.nodes):
        if node.target not in _MIXED_NORMS:
            continue
        source, *others = node.args
        dtype = _dtype(source, module)
        if dtype not in _LOW or torch.float32 not in {_dtype(other, module) for other in others}:
            continue
        with graph.inserting_before(node):
            up = graph.call_function(aten._to_copy.default, (source,), {"dtype": torch.float32})
        node.replace_input_with(source, up)
        for user in list(node.users):
            if user.target is not operator.getitem or user.args[1] != 0:
                continue  # (the statistics are float32 in eager too)
            with graph.inserting_after(user):
                down = graph.call_function(aten._to_copy.default, (user,), {"dtype": dtype})
            user.replace_all_uses_with(down, delete_user_cb=lambda use: use is not down)
        changed += 1
    return changed


def _dtype(node: Any, module: torch.fx.GraphModule) -> torch.dtype | None:
    if not isinstance(node, torch.fx.Node):
        return None
    value = operator.attrgetter(node.target)(module) if node.op == "get_attr" else node.meta.get("val")
    return value.dtype if isinstance(value, torch.Tensor) else None


# --- kernels neither runtime has, written out ------------------------------

def _attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, embed_dim: int,
               num_head: int, qkv_weight: torch.Tensor, qkv_bias: torch.Tensor,
               proj_weight: torch.Tensor, proj_bias: torch.Tensor, mask: torch.Tensor | None = None,
               need_weights: bool = True, average_attn_weights: bool = True,
               mask_type: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """aten::_native_multi_head_attention on dense inputs, in the order its
    CPU kernel computes: the q, k, v projections, bias added and q scaled
    by 1/sqrt(head size), q k^T, the masked softmax, times v, the output
    projection; the weights averaged over heads where asked.

    The mask is True where a key is left out: (length, length) for
    mask_type 0, a key padding mask (batch, length) for 1, and
    (batch, heads, length, length) for 2, as _masked_softmax takes them; a
    row with every key left out is NaN, as the CPU kernel gives it."""
    batch, length, _ = query.shape
    head = embed_dim // num_head

    def heads(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        x = torch.nn.functional.linear(x, weight) + bias
        return x.view(batch, -1, num_head, head).transpose(1, 2)

    (w_q, w_k, w_v), (b_q, b_k, b_v) = qkv_weight.chunk(3), qkv_bias.chunk(3)
    q = heads(query, w_q, b_q) * (1.0 / math.sqrt(head))
    k, v = heads(key, w_k, b_k), heads(value, w_v, b_v)
    scores = q @ k.transpose(-1, -2)
    if mask is None:
        weights = torch.softmax(scores, dim=-1)
    else:
        left_out = mask.to(torch.bool)
        if mask_type == 1:
            left_out = left_out.view(batch, 1, 1, -1)
        elif mask_type != 2:
            left_out = left_out.view(1, 1, length, -1)
        weights = torch.softmax(scores.masked_fill(left_out, -math.inf), dim=-1)
    context = (weights @ v).transpose(1, 2).reshape(batch, length, embed_dim)
    out = torch.nn.functional.linear(context, proj_weight, proj_bias)
    if not need_weights:
        return out, out.new_empty(0)
    return out, weights.mean(dim=1) if average_attn_weights else weights


def _lstm_layer(input: torch.Tensor, weight_ih: torch.Tensor, weight_hh: torch.Tensor,
                bias_ih: torch.Tensor, bias_hh: torch.Tensor, hx: torch.Tensor, cx: torch.Tensor,
                reverse: bool, batch_sizes: list[int], mode: int, hidden_size: int, num_layers: int,
                has_biases: bool, bidirectional: bool, batch_first: bool,
                train: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """aten::mkldnn_rnn_layer (one direction of one LSTM layer, as oneDNN
    computes it for nn.LSTM on CPU): the input time-major, gates i, f, g, o
    from products accumulated in float32 with the biases summed in their
    dtype, the cell state carried in float32, and each step's hidden state
    written in the input's dtype (the next step's input), as oneDNN does."""
    if batch_sizes:
        raise ExportError("mkldnn_rnn_layer: a packed sequence into nn.LSTM is not written out for ONNX "
                          "or ExecuTorch")
    dtype = input.dtype
    w_ih, w_hh = weight_ih.float(), weight_hh.float()
    bias = (bias_ih + bias_hh).float() if has_biases else None
    h = hx.reshape(input.size(1), hidden_size)
    c = cx.reshape(input.size(1), hidden_size).float()
    steps = range(input.size(0) - 1, -1, -1) if reverse else range(input.size(0))
    outputs = [None] * input.size(0)
    for t in steps:
        gates = input[t].float() @ w_ih.t() + h.float() @ w_hh.t()
        if bias is not None:
            gates = gates + bias
        i, f, g, o = gates.chunk(4, dim=1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = (torch.sigmoid(o) * torch.tanh(c)).to(dtype)
        outputs[t] = h
    return (torch.stack(outputs), h.reshape(hx.shape), c.to(cx.dtype).reshape(cx.shape),
            input.new_empty(0, dtype=torch.uint8))


def _addmm_activation(bias: torch.Tensor, mat1: torch.Tensor, mat2: torch.Tensor, *, beta: float = 1,
                      alpha: float = 1, use_gelu: bool = False) -> torch.Tensor:
    """aten::_addmm_activation (the fast path's feed-forward block): its
    CPU kernel's addmm, then its activation, in the result's dtype (the
    same bits)."""
    result = aten.addmm(bias, mat1, mat2, beta=beta, alpha=alpha)
    return torch.nn.functional.gelu(result) if use_gelu else torch.relu(result)


_WRITTEN_OUT = {aten._native_multi_head_attention.default: _attention,
                aten._addmm_activation.default: _addmm_activation,
                aten.mkldnn_rnn_layer.default: _lstm_layer}

__all__ = ["export_onnx", "export_executorch"]
