"""jitamp.export's program on the runtimes users deploy to (issue:
AOTInductor, ONNX, ExecuTorch), each really run: AOTInductor's result
equals what it makes of torch.export.export of the eager model; ONNX's
(onnxruntime) has eager's output dtypes and values within a stated
tolerance; ExecuTorch's equals what it makes of the eager model's export.

The runtimes are optional extras (`pip install jitamp[onnx]`, `[executorch]`);
the README's test set-up installs them. A runtime that is not installed is
a skip naming the extra."""
from __future__ import annotations

import importlib.util
import pytest
import torch
from torch import Tensor, nn

import jitamp
import export_models
from oracle import assert_same, script


def _needs(module: str, extra: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (pip install jitamp[{extra}])")


# --- float16 models (onnxruntime's CPU kernels take float16, not bfloat16) --

class ConvNet(nn.Module):
    """A biased conv, BatchNorm (float32 weights on a float16 input), pooling."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, bias=True)
        self.bn = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 4)

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.float16):
            return self.fc(torch.relu(self.bn(self.conv(x))).mean((2, 3)))


class NormMLP(nn.Module):
    """LayerNorm and GroupNorm on float16 inputs with float32 weights."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 16)
        self.ln = nn.LayerNorm(16)
        self.gn = nn.GroupNorm(4, 16)
        self.b = nn.Linear(16, 4)

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.float16):
            y = torch.relu(self.ln(self.a(x)))
            return self.b(self.gn(y))


class Attention(nn.Module):
    """Hand-written attention with an enabled=False island in float32."""

    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(16, 48)
        self.out = nn.Linear(16, 16)

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.float16):
            q, k, v = self.qkv(x).chunk(3, -1)
            weights = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) / 4.0, -1)
            y = self.out(torch.matmul(weights, v))
            with torch.autocast("cpu", enabled=False):
                return y.float() * torch.sigmoid(x)


class Encoder(nn.Module):
    """nn.TransformerEncoder, which under no_grad takes the layers' fast
    path (its attention, _native_multi_head_attention, written out for
    ONNX)."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.float16):
            return self.encoder(x)


def _gen() -> torch.Generator:
    return torch.Generator().manual_seed(0)


FLOAT16_MODELS = {
    "conv_net": (ConvNet, lambda: (torch.randn(2, 3, 8, 8, generator=_gen()),)),
    "norm_mlp": (NormMLP, lambda: (torch.randn(4, 8, generator=_gen()),)),
    "attention": (Attention, lambda: (torch.randn(2, 5, 16, generator=_gen()),)),
    "encoder": (Encoder, lambda: (torch.randn(2, 5, 16, generator=_gen()),)),
    "gru_cell_loop": (lambda: export_models.GRUCellLoop(torch.float16),
                      lambda: (torch.randn(3, 4, 8, generator=_gen()),)),
}


def _float16_model(name: str):
    torch.manual_seed(0)
    model_class, inputs = FLOAT16_MODELS[name]
    return model_class().eval(), inputs()


# --- ONNX ------------------------------------------------------------------

# onnxruntime computes in float16 where eager's CPU kernels accumulate in
# float32: its outputs are within this of eager's (relative to the
# output's largest magnitude), in eager's dtype.
ONNX_TOLERANCE = 4e-3


def _onnxruntime_outputs(onnx_program, args, tmp_path) -> list:
    import onnxruntime

    path = tmp_path / "model.onnx"
    onnx_program.save(str(path))
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    feeds = {given.name: arg.numpy() for given, arg in zip(session.get_inputs(), args)}
    return [torch.from_numpy(output) for output in session.run(None, feeds)]


@pytest.mark.parametrize("name", FLOAT16_MODELS)
def test_onnxruntime_runs_the_program_with_eagers_dtypes(name, tmp_path):
    _needs("onnxruntime", "onnx")
    _needs("onnxscript", "onnx")
    eager, args = _float16_model(name)
    with torch.no_grad():
        expected = torch.utils._pytree.tree_leaves(eager(*args))
        onnx_program = jitamp.export_onnx(script(eager), args)
    got = _onnxruntime_outputs(onnx_program, args, tmp_path)
    assert [t.dtype for t in got] == [t.dtype for t in expected]
    for a, b in zip(expected, got):
        scale = float(a.float().abs().max()) or 1.0
        assert float((a.float() - b.float()).abs().max()) <= ONNX_TOLERANCE * scale


def test_every_cast_eager_makes_is_in_the_onnx_graph():
    """The ONNX graph holds a Cast for each cast of the explicit program,
    and LayerNormalization (float32 weights on a float16 input in eager)
    takes its input cast up to float32 and gives its output cast back
    down to float16."""
    _needs("onnxscript", "onnx")
    from onnx import TensorProto

    eager, args = _float16_model("norm_mlp")
    with torch.no_grad():
        program = jitamp.export(script(eager), args, explicit_casts=True)
        graph = jitamp.export_onnx(program, args).model_proto.graph
    casts = sum(node.target is torch.ops.aten._to_copy.default for node in program.graph.nodes)
    cast_to = {output: next(a.i for a in node.attribute if a.name == "to")
               for node in graph.node if node.op_type == "Cast" for output in node.output}
    assert len(cast_to) >= casts
    norms = [node for node in graph.node if node.op_type == "LayerNormalization"]
    assert norms
    for norm in norms:
        assert cast_to.get(norm.input[0]) == TensorProto.FLOAT
        (user,) = [node for node in graph.node if norm.output[0] in node.input]
        assert user.op_type == "Cast" and cast_to[user.output[0]] == TensorProto.FLOAT16


def test_the_anchor_onnx_graph_is_refused_by_onnxruntime(tmp_path):
    """torch.onnx.export of the eager model's own export writes a graph
    onnxruntime refuses (LayerNormalization's float16 input with float32
    weights): the anchor jitamp.export_onnx is measured against."""
    _needs("onnxruntime", "onnx")
    _needs("onnxscript", "onnx")
    eager, args = _float16_model("norm_mlp")
    with torch.no_grad():
        anchor = torch.onnx.export(torch.export.export(eager, args), args, dynamo=True)
    with pytest.raises(Exception, match="bound to different types"):
        _onnxruntime_outputs(anchor, args, tmp_path)


class MaskedEncoder(Encoder):
    def forward(self, x: Tensor, padding: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.float16):
            return self.encoder(x, src_key_padding_mask=padding)


def test_export_onnx_refuses_the_fast_paths_attention_with_a_mask():
    """The attention written out for ONNX takes no mask yet: an
    ExportError that says so, not a graph without the mask."""
    _needs("onnxscript", "onnx")
    torch.manual_seed(0)
    eager = MaskedEncoder().eval()
    padding = torch.zeros(2, 5, dtype=torch.bool)
    padding[1, 3:] = True
    with torch.no_grad(), pytest.raises(jitamp.ExportError, match="with a mask"):
        jitamp.export_onnx(script(eager), (torch.randn(2, 5, 16, generator=_gen()), padding))


def test_export_onnx_refuses_a_program_with_regions():
    eager, args = _float16_model("conv_net")
    program = jitamp.export(script(eager), args)
    with pytest.raises(jitamp.ExportError, match="explicit_casts=True"):
        jitamp.export_onnx(program, args)


# --- AOTInductor -----------------------------------------------------------

def _aoti(program, tmp_path, label: str):
    path = torch._inductor.aoti_compile_and_package(program, package_path=str(tmp_path / f"{label}.pt2"))
    return torch._inductor.aoti_load_package(path)


# One model of each kind (AOTInductor compiles each program in ~15 s here).
AOTI_MODELS = ["containers", "gru_cell_loop", "segmentation"]


@pytest.mark.parametrize("explicit_casts", [False, True], ids=["regions", "explicit_casts"])
@pytest.mark.parametrize("name", AOTI_MODELS)
def test_aotinductor_compiles_the_program_as_it_compiles_eagers_export(name, explicit_casts, tmp_path):
    eager = export_models.build(name)
    args = tuple(export_models.inputs(name))
    with torch.no_grad():
        program = jitamp.export(script(eager), args, explicit_casts=explicit_casts)
        anchor = torch.export.export(eager, args)
        expected = _aoti(anchor, tmp_path, "anchor")(*args)
        got = _aoti(program, tmp_path, "program")
        for call in range(3):
            assert_same(expected, got(*args), what=f"call {call + 1}")


@pytest.mark.parametrize("explicit_casts", [False, True], ids=["regions", "explicit_casts"])
def test_aotinductor_compiles_the_encoders_fast_path_with_eagers_dtypes(explicit_casts, tmp_path):
    """nn.TransformerEncoder under no_grad takes its fast path, whose kernel
    eager's autocast reaches inside. Eager's own export gives float32 there
    (the anchor, checked without compiling it); jitamp's program holds the
    kernel written out, so AOTInductor gets eager's ops: eager's dtype, and
    values within one bfloat16 step of the output's magnitude (Inductor
    fuses the norms: not bitwise; measured 0.0156 on outputs up to 3.3)."""
    eager = export_models.build("encoder_post_norm")
    args = tuple(export_models.inputs("encoder_post_norm"))
    with torch.no_grad():
        expected = eager(*args)
        assert expected.dtype == torch.bfloat16
        assert torch.export.export(eager, args).module()(*args).dtype == torch.float32, "the anchor is fixed"
        program = jitamp.export(script(eager), args, explicit_casts=explicit_casts)
        try:
            compiled = _aoti(program, tmp_path, "program")
        except Exception as error:
            _skip_where_aotinductor_cannot_compile_the_attention(error, tmp_path)
            raise
        for call in range(3):
            assert_same(expected, compiled(*args), exact=False, rtol=0, atol_of_max=2 ** -7,
                        what=f"call {call + 1}")


class _FastPathAttention(nn.Module):
    """nn.MultiheadAttention's fast path as eager calls it."""

    def __init__(self):
        super().__init__()
        self.attention = nn.MultiheadAttention(16, 4, batch_first=True)

    def forward(self, x: Tensor) -> Tensor:
        a = self.attention
        return torch._native_multi_head_attention(x, x, x, 16, 4, a.in_proj_weight, a.in_proj_bias,
                                                  a.out_proj.weight, a.out_proj.bias, None, False)[0]


def _skip_where_aotinductor_cannot_compile_the_attention(error: Exception, tmp_path) -> None:
    """A skip where AOTInductor fails on _native_multi_head_attention
    itself: an eager module calling it, exported by torch.export, fails to
    compile too (torch 2.6: its unused second output)."""
    x = torch.randn(2, 5, 16)
    try:
        _aoti(torch.export.export(_FastPathAttention().eval(), (x,)), tmp_path, "attention")
    except Exception as anchor_error:
        pytest.skip(f"AOTInductor of torch {torch.__version__} cannot compile _native_multi_head_attention, "
                    f"in eager's export too: {type(anchor_error).__name__}: {str(anchor_error)[:120]} "
                    f"(jitamp's program: {type(error).__name__})")


# --- ExecuTorch ------------------------------------------------------------

def _executorch_outputs(program, args) -> list:
    from executorch.exir import to_edge_transform_and_lower
    from executorch.runtime import Runtime

    buffer = to_edge_transform_and_lower(program).to_executorch().buffer
    method = Runtime.get().load_program(buffer).load_method("forward")
    return list(method.execute(list(torch.utils._pytree.tree_leaves(args))))


EXECUTORCH_MODELS = ["containers", "buffers", "scalar_of_sizes"]


@pytest.mark.parametrize("name", EXECUTORCH_MODELS)
def test_executorch_runs_the_program_as_it_runs_eagers_export(name):
    """ExecuTorch (to_edge_transform_and_lower(...).to_executorch(), run by
    executorch.runtime) of the explicit-casts program gives the bits it
    gives the eager model's own export (executorch 1.5.1, torch 2.13)."""
    _needs("executorch", "executorch")
    eager = export_models.build(name)
    args = tuple(export_models.inputs(name))
    with torch.no_grad():
        expected = _executorch_outputs(torch.export.export(eager, args), args)
        got = _executorch_outputs(jitamp.export(script(eager), args, explicit_casts=True), args)
    assert_same(expected, got)
