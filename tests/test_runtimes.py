"""jitamp.export's program on the runtimes users deploy to, each really
run on every model jitamp.export exports (tests/export_models.py, the
models of tests/test_export.py; on ExecuTorch its scope shapes too, which
test_export.py compiles with AOTInductor itself):

- AOTInductor: the bits AOTInductor makes of torch.export.export of the
  eager model, in both forms; where eager's own export loses eager's
  dtypes (a fused kernel eager's autocast reaches inside), eager's dtypes
  and values within a stated tolerance;
- ONNX (onnxruntime, whose CPU kernels take float16 and not bfloat16):
  every model in float16, eager's dtypes and values within a stated
  tolerance; in bfloat16 a valid ONNX model or an ExportError;
- ExecuTorch (executorch.runtime): eager's dtypes, values within a stated
  tolerance, and the bits ExecuTorch makes of the eager model's own
  export wherever that export keeps eager's casts.

The runtimes are optional extras (`pip install jitamp[onnx]`, `[executorch]`);
the README's test set-up installs them. A runtime that is not installed is
a skip naming the extra."""
from __future__ import annotations

import importlib.util
import pathlib
import subprocess
import sys

import pytest
import torch
from torch import Tensor, nn

import jitamp
from jitamp import _runtimes
import export_models
import test_export
from oracle import NO_EXPORT_REGIONS, assert_same, script

MODELS = list(export_models.MODELS)
# and test_export.py's scope shapes (nested scopes, enabled=False inside a
# region, submodules with scopes of their own, dtype left out, flags, an
# early return, a decorator), on ExecuTorch
SHAPES = [f"shape.{name}" for name in test_export.SHAPES]
leaves = torch.utils._pytree.tree_leaves
TESTS = str(pathlib.Path(__file__).resolve().parent)
# on the tests that run jitamp.export
needs_export = pytest.mark.skipif(NO_EXPORT_REGIONS is not None, reason=str(NO_EXPORT_REGIONS))


def _needs(module: str, extra: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (pip install jitamp[{extra}])")


def _model(name: str, dtype: torch.dtype = torch.bfloat16):
    if name.startswith("shape."):
        assert dtype is torch.bfloat16
        return test_export._model(name.split(".", 1)[1]).eval(), test_export._example()
    models = export_models.in_dtype(dtype)
    return models.build(name), tuple(models.inputs(name))


def _bitwise(a, b) -> bool:
    try:
        assert_same(a, b)
    except AssertionError:
        return False
    return True


# --- ONNX ------------------------------------------------------------------

# onnxruntime computes in float16 where eager's CPU kernels accumulate in
# float32: its outputs are within this of eager's (relative to each
# output's largest magnitude), in eager's dtype (measured up to 8.2e-4).
ONNX_TOLERANCE = 4e-3


def _onnxruntime_outputs(onnx_program, args, tmp_path) -> list:
    import onnxruntime

    path = tmp_path / "model.onnx"
    onnx_program.save(str(path))
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    feeds = {given.name: arg.numpy() for given, arg in zip(session.get_inputs(), leaves(args))}
    return [torch.from_numpy(output) for output in session.run(None, feeds)]


@needs_export
@pytest.mark.parametrize("name", MODELS)
def test_onnxruntime_runs_every_model_in_float16_with_eagers_dtypes(name, tmp_path):
    _needs("onnxruntime", "onnx")
    _needs("onnxscript", "onnx")
    eager, args = _model(name, torch.float16)
    with torch.no_grad():
        expected = leaves(eager(*args))  # (as runtimes give them: flattened, in the program's order)
        onnx_program = jitamp.export_onnx(script(eager), args)
    assert_same(expected, _onnxruntime_outputs(onnx_program, args, tmp_path), exact=False, rtol=0,
                atol_of_max=ONNX_TOLERANCE)


@needs_export
@pytest.mark.parametrize("name", ["containers", "resnet"])
def test_export_onnx_in_bfloat16_is_valid_onnx_or_an_export_error(name, tmp_path):
    """ONNX types Conv and SplitToSequence without bfloat16: ExportError
    naming the op, never a file no runtime loads. Where the graph is valid,
    onnxruntime runs it to eager's dtypes or has no CPU kernel for it."""
    _needs("onnxruntime", "onnx")
    _needs("onnxscript", "onnx")
    import onnxruntime

    eager, args = _model(name)
    with torch.no_grad():
        expected = leaves(eager(*args))
        try:
            onnx_program = jitamp.export_onnx(script(eager), args)
        except jitamp.ExportError as error:
            assert name == "resnet" and "not valid ONNX" in str(error) and "op_type:Conv" in str(error)
            return
    assert name == "containers"
    try:
        got = _onnxruntime_outputs(onnx_program, args, tmp_path)
    except onnxruntime.capi.onnxruntime_pybind11_state.NotImplemented as error:
        assert "Could not find an implementation" in str(error)
        return
    assert_same(expected, got, exact=False, rtol=0, atol_of_max=2 ** -6)


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


def _norm_mlp():
    torch.manual_seed(0)
    return NormMLP().eval(), (torch.randn(4, 8, generator=torch.Generator().manual_seed(0)),)


@needs_export
def test_every_cast_eager_makes_is_in_the_onnx_graph():
    """The ONNX graph holds a Cast for each cast of the explicit program,
    and LayerNormalization (float32 weights on a float16 input in eager)
    takes its input cast up to float32 and gives its output cast back
    down to float16."""
    _needs("onnxscript", "onnx")
    from onnx import TensorProto

    eager, args = _norm_mlp()
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
    eager, args = _norm_mlp()
    with torch.no_grad():
        anchor = torch.onnx.export(torch.export.export(eager, args), args, dynamo=True)
    with pytest.raises(Exception, match="bound to different types"):
        _onnxruntime_outputs(anchor, args, tmp_path)


@needs_export
@pytest.mark.parametrize("runtime", ["onnx", "executorch"])
def test_a_program_with_regions_is_refused(runtime):
    _needs(runtime, runtime)
    eager, args = _norm_mlp()
    program = jitamp.export(script(eager), args)
    with pytest.raises(jitamp.ExportError, match="explicit_casts=True"):
        {"onnx": jitamp.export_onnx, "executorch": jitamp.export_executorch}[runtime](program, args)


# --- the kernels written out for ONNX and ExecuTorch -------------------------

@pytest.mark.parametrize("mask_type", [None, 0, 1, 2])
def test_the_attention_written_out_computes_what_its_kernel_does(mask_type):
    """_native_multi_head_attention's kernel against the ops it is written
    out as, in float32 (so the comparison is of the computation, not of
    rounding), with each kind of mask, a row whose every key is left out
    among them (NaN there, in the kernel's masked softmax as in softmax)."""
    torch.manual_seed(0)
    attention = nn.MultiheadAttention(16, 4, batch_first=True).eval()
    x = torch.randn(3, 5, 16)
    mask = {None: None, 0: torch.rand(5, 5) > 0.7, 1: torch.rand(3, 5) > 0.6,
            2: torch.rand(3, 4, 5, 5) > 0.7}[mask_type]
    if mask is not None:
        mask.view(-1, 5)[0] = True  # every key left out
    weights = (x, x, x, 16, 4, attention.in_proj_weight, attention.in_proj_bias, attention.out_proj.weight,
               attention.out_proj.bias, mask)
    with torch.no_grad():
        for need_weights in (False, True):
            expected = torch._native_multi_head_attention(*weights, need_weights, True, mask_type)
            got = _runtimes._attention(*weights, need_weights, True, mask_type)
            compared = expected if need_weights else expected[:1]
            assert_same(compared, got[:len(compared)], exact=False, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
def test_the_lstm_layer_written_out_computes_what_onednn_does(reverse):
    """mkldnn_rnn_layer (nn.LSTM's layer on CPU) against the ops it is
    written out as, in bfloat16 as autocast calls it: the same dtypes, and
    values within one bfloat16 step of each output's magnitude (oneDNN's
    own code, which the ops approach)."""
    torch.manual_seed(0)
    lstm = nn.LSTM(6, 8)
    weights = [w.detach().bfloat16() for w in lstm.all_weights[0]]
    x, h, c = torch.randn(7, 3, 6).bfloat16(), torch.randn(3, 8).bfloat16(), torch.randn(3, 8).bfloat16()
    arguments = (x, *weights, h, c, reverse, [], 2, 8, 1, True, False, False, False)
    with torch.no_grad():
        try:
            expected = torch.ops.aten.mkldnn_rnn_layer(*arguments)[:3]
        except RuntimeError as error:
            if "could not create a primitive descriptor" not in str(error):
                raise
            pytest.skip("oneDNN has no bfloat16 LSTM primitive on this CPU (seen on AVX2-only AMD EPYC), "
                        "so there is no oneDNN result to compare with")
        got = _runtimes._lstm_layer(*arguments)[:3]
    assert_same(expected, got, exact=False, rtol=0, atol_of_max=2 ** -7)


# --- AOTInductor -----------------------------------------------------------

def _aoti(program, tmp_path, label: str):
    path = torch._inductor.aoti_compile_and_package(program, package_path=str(tmp_path / f"{label}.pt2"))
    return torch._inductor.aoti_load_package(path)


# Where eager's own export loses eager's casts (nn.TransformerEncoderLayer's
# fast path, one op eager's autocast reaches inside), jitamp's program holds
# the kernel written out, and AOTInductor gets eager's dtype and values
# within one bfloat16 step of the output's magnitude (Inductor fuses the
# norms: not bitwise; measured 0.0156 on outputs up to 3.3).
AOTI_TOLERANCE = 2 ** -7


_NOT_A_DEVICE_ALLOCATOR = "is not a DeviceAllocator"


@needs_export
@pytest.mark.parametrize("name", MODELS)
def test_aotinductor_compiles_every_model_as_it_compiles_eagers_export(name, tmp_path):
    """Both forms, calls 1-3: the bits of AOTInductor of
    torch.export.export(eager) where that export has eager's bits (run
    uncompiled to see), else eager's dtypes and values within
    AOTI_TOLERANCE. (The scope shapes: test_export.py's AOTInductor test.)"""
    try:
        _compiles_as_eagers_export(name, str(tmp_path))
    except Exception as error:
        if _NOT_A_DEVICE_ALLOCATOR not in str(error):
            raise
        # torch 2.15's AOTInductor asks the registered accelerator for its
        # DeviceAllocator: once test_backend_sanity.py has registered the
        # jitamptest backend in this process (as pytest collects it), that
        # backend's plain c10::Allocator. Again, in a process without it.
        _in_a_fresh_process(f"test_runtimes._compiles_as_eagers_export({name!r}, {str(tmp_path)!r})")


def _compiles_as_eagers_export(name: str, folder: str) -> None:
    tmp_path = pathlib.Path(folder)
    eager, args = _model(name)
    with torch.no_grad():
        expected = eager(*args)
        # (a model of its own: torch 2.6's export of an nn.LSTM leaves the
        # module's weights on storage TorchScript cannot save)
        anchor_model, _ = _model(name)
        try:
            anchor = torch.export.export(anchor_model, args)
            exact = _bitwise(anchor.module()(*args), expected)
            anchor_error = None
        except Exception as error:  # (torch 2.6: its strict export of the masked encoder; nested regions)
            if _NOT_A_DEVICE_ALLOCATOR in str(error):
                raise
            exact, anchor_error = False, error
        programs = {form: jitamp.export(script(eager), args, explicit_casts=form == "explicit casts")
                    for form in ("regions", "explicit casts")}
        if exact:
            # (AOTInductor given the program eager's export is compiles it
            # as it compiles that export: one compile saved, the anchor's)
            same = _same_program(programs["regions"], anchor)
            expected = None if same else _aoti(anchor, tmp_path, "anchor")(*args)
        for form, program in programs.items():
            try:
                compiled = _aoti(program, tmp_path, form.replace(" ", "_"))
                outputs = [compiled(*args) for _ in range(3)]
                if expected is None:
                    expected = outputs[0]
            except Exception as error:
                if anchor_error is not None:
                    pytest.skip(f"AOTInductor of torch.export.export(eager) fails on torch {torch.__version__} "
                                f"too: {type(anchor_error).__name__}: {str(anchor_error)[:160]} (jitamp's "
                                f"program, {form}: {type(error).__name__})")
                _skip_where_aotinductor_cannot_compile_the_attention(error, tmp_path)
                raise
            for call, output in enumerate(outputs):
                assert_same(expected, output, exact=exact, rtol=0, atol_of_max=AOTI_TOLERANCE,
                            what=f"{form}, call {call + 1}")


def _same_program(a: torch.export.ExportedProgram, b: torch.export.ExportedProgram) -> bool:
    """Whether a and b are one program to AOTInductor: the same graph code,
    signature and call graph, inputs of the same shapes, strides and
    dtypes, and the same weights bit for bit."""
    def inputs(program):
        return [(value.shape, value.stride(), value.dtype) if isinstance(value := node.meta.get("val"), Tensor)
                else value for node in program.graph.nodes if node.op == "placeholder"]

    def weights(program):
        return {**program.state_dict, **program.constants}

    if (a.graph_module.code, str(a.graph_signature), inputs(a)) != (b.graph_module.code, str(b.graph_signature),
                                                                    inputs(b)):
        return False
    if a.module_call_graph != b.module_call_graph or weights(a).keys() != weights(b).keys():
        return False
    return all(x.dtype == y.dtype and x.stride() == y.stride() and torch.equal(x, y)
               for x, y in ((weights(a)[key], weights(b)[key]) for key in weights(a)))


@needs_export
def test_same_program_tells_a_changed_graph_or_weight_apart():
    """The sweep compiles eager's export only where _same_program says
    jitamp's program differs from it."""
    eager, args = _model("buffers")
    with torch.no_grad():
        anchor = torch.export.export(_model("buffers")[0], args)
        regions, explicit = (jitamp.export(script(eager), args, explicit_casts=form) for form in (False, True))
    assert _same_program(regions, anchor)
    assert not _same_program(explicit, anchor)
    with torch.no_grad():
        next(iter(regions.state_dict.values())).view(-1)[0] += 1
    assert not _same_program(regions, anchor)


def _in_a_fresh_process(call: str) -> None:
    """`call` (of this module) in a new Python process; a pytest.skip there
    is one here."""
    code = (f"import sys, warnings; sys.path.insert(0, {TESTS!r}); warnings.simplefilter('ignore')\n"
            "import _pytest.outcomes, test_runtimes\n"
            f"try:\n    {call}\nexcept _pytest.outcomes.Skipped as skipped:\n"
            "    print('SKIPPED:', skipped.msg)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
    if "SKIPPED: " in done.stdout:
        pytest.skip(done.stdout.split("SKIPPED: ", 1)[1].strip())


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

# ExecuTorch's portable kernels are not eager's (bfloat16 matmuls
# accumulate otherwise): eager's dtypes, values within two bfloat16 steps
# of each output's magnitude (measured up to 9.9e-3, the encoder's).
EXECUTORCH_TOLERANCE = 2 ** -6


def _on_executorch(manager, args):
    """ExecuTorch's outputs for its program `manager`
    (ExecutorchProgramManager), and the number of casts to a low-precision
    dtype in that program."""
    from executorch.runtime import Runtime

    method = Runtime.get().load_program(manager.buffer).load_method("forward")
    casts = sum("_to_dim_order_copy" in str(node.target) and node.meta["val"].dtype in (torch.float16, torch.bfloat16)
                for node in manager.exported_program().graph.nodes if node.op == "call_function")
    return list(method.execute(list(leaves(args)))), casts


@needs_export
@pytest.mark.parametrize("name", MODELS + SHAPES)
def test_executorch_runs_every_model_with_eagers_dtypes(name):
    """Eager's dtypes and values within EXECUTORCH_TOLERANCE; and where
    ExecuTorch runs the eager model's own export (it does not where a
    norm's kernel would take mixed dtypes, or an op outside core ATen is
    left) and no kernel was written out: its bits, where it keeps as many
    casts as jitamp's, and else (ExecuTorch's lowering of a region decomposes
    a composite op without the region's casts: GRUCell, the encoder layer)
    jitamp's is nearer eager."""
    _needs("executorch", "executorch")
    from executorch.exir import to_edge_transform_and_lower

    eager, args = _model(name)
    with torch.no_grad():
        expected = leaves(eager(*args))
        program = jitamp.export(script(eager), args, explicit_casts=True)
        got, casts = _on_executorch(jitamp.export_executorch(program, args), args)
        assert_same(expected, got, exact=False, rtol=0, atol_of_max=EXECUTORCH_TOLERANCE)
        if any(node.target in _runtimes._WRITTEN_OUT for node in program.graph.nodes):
            return
        try:
            anchor, anchor_casts = _on_executorch(
                to_edge_transform_and_lower(torch.export.export(eager, args)).to_executorch(), args)
        except Exception:
            return
    if anchor_casts == casts:
        assert_same(anchor, got, what="against ExecuTorch of eager's own export")
    else:
        assert anchor_casts < casts

        def error(outputs):
            return max(float((a.double() - b.double()).abs().max()) for a, b in zip(expected, outputs))
        assert error(got) < error(anchor)
