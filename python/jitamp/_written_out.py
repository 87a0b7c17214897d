"""Kernels written out as the ops they dispatch, for torch.export to trace
(jitamp.export; docs/exporting.md).

torch.export records an op whole when it has a kernel of its own. Where
that kernel calls, through the dispatcher, ops that eager's autocast casts,
eager's result holds those casts, and the recorded op holds none of them:
run later without autocast (explicit casts, or AOTInductor compiling a
region, which calls the op as an extern kernel) it computes otherwise. The
interpreter runs such an op as its kernel written out here instead: the
same ops in the same order, each dispatched through autocast as in eager,
so both forms of the program record the op's parts (and, with explicit
casts, their casts), and no op of the kind is left.

Each kernel follows the C++ kernel, and calls the ops eager's profile
shows it calling, on every torch jitamp.export runs on (2.6-2.15); the
tests compare both forms with eager on each.
"""
from __future__ import annotations

import torch

aten = torch.ops.aten


def _norm(x: torch.Tensor, embed_dim: int, eps: float, weight: torch.Tensor,
          bias: torch.Tensor) -> torch.Tensor:
    return aten.layer_norm(x, [embed_dim], weight, bias, eps, True)


def _linear_for_ffn(bias: torch.Tensor, mat1: torch.Tensor, mat2: torch.Tensor,
                    use_gelu: bool | None) -> torch.Tensor:
    rows = aten.view(mat1, [mat1.size(0) * mat1.size(1), mat1.size(2)])
    if use_gelu is None:
        result = aten.addmm(bias, rows, aten.t(mat2))
    else:
        result = aten._addmm_activation(bias, rows, aten.t(mat2), beta=1, alpha=1, use_gelu=use_gelu)
    return aten.view(result, [mat1.size(0), mat1.size(1), -1])


def transformer_encoder_layer_fwd(
        src: torch.Tensor, embed_dim: int, num_heads: int, qkv_weight: torch.Tensor,
        qkv_bias: torch.Tensor, proj_weight: torch.Tensor, proj_bias: torch.Tensor,
        use_gelu: bool, norm_first: bool, eps: float, norm_weight_1: torch.Tensor,
        norm_bias_1: torch.Tensor, norm_weight_2: torch.Tensor, norm_bias_2: torch.Tensor,
        ffn_weight_1: torch.Tensor, ffn_bias_1: torch.Tensor, ffn_weight_2: torch.Tensor,
        ffn_bias_2: torch.Tensor, mask: torch.Tensor | None = None,
        mask_type: int | None = None) -> torch.Tensor:
    """aten::_transformer_encoder_layer_fwd (nn.TransformerEncoderLayer's
    fast path) on a dense input: transformer_encoder_layer_forward in
    ATen's transformers/transformer.cpp. Attention is
    _native_multi_head_attention (eager's autocast casts it whole), the
    feed-forward block addmm and _addmm_activation on views, the norms
    layer_norm, the residuals in-place adds."""
    if src.is_nested:
        raise NotImplementedError("a nested tensor reaches nn.TransformerEncoderLayer's fast path")
    if src.numel() == 0:
        return aten.clone(src)
    x = src
    if norm_first:
        x = _norm(x, embed_dim, eps, norm_weight_1, norm_bias_1)
    x = aten._native_multi_head_attention(x, x, x, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight,
                                          proj_bias, mask, False, True, mask_type)[0]
    x = aten.add_(x, src)
    if not norm_first:
        x = _norm(x, embed_dim, eps, norm_weight_1, norm_bias_1)
    before_ffn = x
    if norm_first:
        x = _norm(x, embed_dim, eps, norm_weight_2, norm_bias_2)
    x = _linear_for_ffn(ffn_bias_1, x, ffn_weight_1, use_gelu)
    x = _linear_for_ffn(ffn_bias_2, x, ffn_weight_2, None)
    x = aten.add_(x, before_ffn)
    if not norm_first:
        x = _norm(x, embed_dim, eps, norm_weight_2, norm_bias_2)
    return x


# the TorchScript op -> its kernel written out
WRITTEN_OUT = {"aten::_transformer_encoder_layer_fwd": transformer_encoder_layer_fwd}
