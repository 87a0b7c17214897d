"""jitamp.export (issues 43 and 63): scripted and loaded models with autocast
scopes as torch.export programs, in both forms (torch.export's own autocast
regions, or every cast written out), checked against eager autocast
(outputs, dtypes, bitwise values, gradients) through ep.module(),
torch.export.save / load, dynamic batch sizes, and the `jitamp export`
command."""
from __future__ import annotations

import importlib.util
import inspect
import io
import os
import subprocess
import sys
from typing import Optional

import pytest
import torch
from torch import Tensor, nn

import export_models
import jitamp
from oracle import NO_EXPORT_REGIONS, assert_same, autocast_state, clone_args, cpu_autocast, script, script_without_jitamp, torchscript_deprecation_ignored
import test_architectures as architectures


EXPORT = NO_EXPORT_REGIONS is None
pytestmark = [
    # torch's own, from torch.export and Inductor
    pytest.mark.filterwarnings(r"ignore:`isinstance\(treespec, LeafSpec\)` is deprecated:FutureWarning"),
    pytest.mark.filterwarnings("ignore:bf16 and fp16 are mixed in the scheduler node:UserWarning"),
    pytest.mark.filterwarnings("ignore:'norm' was found in ScriptModule constants:UserWarning"),
    pytest.mark.filterwarnings("ignore:jitamp.export. an autocast scope without dtype=:UserWarning"),
    pytest.mark.filterwarnings(r"ignore:jitamp.export. the model reads torch.is_grad_enabled\(\):UserWarning"),
    pytest.mark.filterwarnings("ignore:enable_nested_tensor is True:UserWarning"),
    pytest.mark.filterwarnings("ignore:Converting aten..append.t:UserWarning"),
]


@pytest.fixture(autouse=True)
def _needs_torch_export_regions(request):
    if not EXPORT and request.node.originalname != "test_older_torch_gets_a_clear_error":
        pytest.skip(NO_EXPORT_REGIONS + " (test_older_torch_gets_a_clear_error checks the error)")


# ---------------------------------------------------------------------------
# Scope shapes: each module's forward is the case; eager autocast is the oracle.

class WithFc(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)


class Simple(WithFc):
    """The issue's module: PyTorch's converter gives float32 here."""

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return self.fc(x).softmax(-1)


class Nested(WithFc):
    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = self.fc(x)
            with torch.autocast("cpu", enabled=False):
                z = torch.mm(y.float(), x.t())  # float32 inside the disabled scope
            with torch.autocast("cpu", dtype=torch.float16):
                w = torch.mm(z, z)
            return torch.mm(w.float(), y.float()) + z.sum()


class Inner(WithFc):
    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.float16):
            return self.fc(x)


class Submodules(nn.Module):
    """A submodule with its own scope, called inside and outside a region."""

    def __init__(self):
        super().__init__()
        self.inner = Inner()
        self.conv = nn.Conv1d(8, 8, 3, padding=1, bias=True)  # biased conv: the built-in crashes on it

    def forward(self, x: Tensor) -> Tensor:
        a = self.inner(x)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            b = self.conv(x.t().unsqueeze(0)).squeeze(0).t()
            c = self.inner(b.float()) + a.float()
        return c.relu() @ b.float().t()


class DtypeLeftOut(WithFc):
    """dtype read when the region runs (the thread's CPU autocast dtype)."""

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu"):
            return self.fc(x).sigmoid()


class Flags(WithFc):
    """Scope arguments from module attributes (constants once frozen),
    cache_enabled=False."""

    def __init__(self, use_amp: bool = True):
        super().__init__()
        self.use_amp = use_amp

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.use_amp, cache_enabled=False):
            y = self.fc(x) * 2
        return torch.log_softmax(y, -1)


class EarlyReturn(WithFc):
    """A return inside the scope (TorchScript alone refuses it)."""

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = self.fc(x)
            if x.size(0) > 2:
                return torch.log_softmax(y, -1)
            y = y * 2
        return y


class Decorated(WithFc):
    @torch.autocast("cpu", dtype=torch.bfloat16)
    def forward(self, x: Tensor) -> Tensor:
        return torch.mm(self.fc(x), x.t())


SHAPES = {
    "simple": Simple,
    "nested": Nested,
    "submodules": Submodules,
    "dtype_left_out": DtypeLeftOut,
    "flags": Flags,
    "flags_disabled": lambda: Flags(use_amp=False),
    "decorated": Decorated,
    "early_return": EarlyReturn,
}
# Scripted only with jitamp: TorchScript alone refuses a return inside a
# with block (jitamp/_early_exits.py makes it scriptable) and compiles an
# autocast-decorated method without its autocast.
JITAMP_ONLY = {"early_return", "decorated"}


def _model(name: str) -> nn.Module:
    torch.manual_seed(0)
    return SHAPES[name]()


def _example() -> tuple[Tensor]:
    return (torch.randn(4, 8, generator=torch.Generator().manual_seed(7)),)


def _saved_and_loaded(scripted) -> torch.jit.ScriptModule:
    buffer = io.BytesIO()
    with torchscript_deprecation_ignored():
        torch.jit.save(scripted, buffer)
        buffer.seek(0)
        return torch.jit.load(buffer)


SCRIPTED_HOW = {
    "jitamp": script,
    "plain": script_without_jitamp,
    "jitamp_loaded": lambda m: _saved_and_loaded(script(m)),
    "plain_loaded": lambda m: _saved_and_loaded(script_without_jitamp(m)),
}


def _export_saved_and_loaded(program):
    buffer = io.BytesIO()
    torch.export.save(program, buffer)
    buffer.seek(0)
    return torch.export.load(buffer)


def _check_inference(eager: nn.Module, program, args, outer: Optional[str] = None) -> None:
    def under_outer(fn):
        if outer is None:
            return fn(*args)
        with torch.autocast("cpu", dtype=getattr(torch, outer)):
            return fn(*args)

    with torch.no_grad():
        expected = under_outer(eager)
        for call in range(3):  # the program has no plans, but once is no proof
            assert_same(expected, under_outer(program.module()), what=f"call {call + 1}")


@pytest.mark.parametrize("how", SCRIPTED_HOW)
@pytest.mark.parametrize("name", SHAPES)
def test_scope_shapes_export_as_eager_runs(name, how):
    if name in JITAMP_ONLY and how.startswith("plain"):
        pytest.skip("TorchScript without jitamp cannot script this shape as eager runs it (JITAMP_ONLY)")
    eager = _model(name).eval()
    scripted = SCRIPTED_HOW[how](eager)
    before = str(scripted.graph)
    program = jitamp.export(scripted, _example())
    assert str(scripted.graph) == before, "jitamp.export changed the model"
    _check_inference(eager, program, _example())
    _check_inference(eager, _export_saved_and_loaded(program), _example())


@pytest.mark.parametrize("outer", ["bfloat16", "float16"])
def test_callers_autocast_reaches_the_exported_program_as_it_reaches_eager(outer):
    eager = _model("submodules").eval()
    program = jitamp.export(script(eager), _example())
    _check_inference(eager, program, _example(), outer=outer)


def _nodes(program) -> list[torch.fx.Node]:
    """Every node of the program, its regions' bodies' included."""
    return [node for module in program.graph_module.modules() if isinstance(module, torch.fx.GraphModule)
            for node in module.graph.nodes]


def _regions(program) -> list:
    """Each region's device type, dtype (where enabled) and enabled flag.
    (Not its cache flag: what a trace records for a scope that gives none
    differs between torch versions, None or the trace's off, and changes
    no value; nor a disabled region's dtype, which nothing reads.)"""
    return [(node.args[0], node.args[1] if node.args[2] else None, node.args[2])
            for node in _nodes(program) if node.target is torch.ops.higher_order.wrap_with_autocast]


@pytest.mark.parametrize("name", ["simple", "nested", "submodules", "flags"])
def test_the_regions_are_those_torch_export_makes_of_the_eager_module(name):
    eager = _model(name).eval()
    program = jitamp.export(script(eager), _example())
    assert sorted(map(str, _regions(program))) == sorted(map(str, _regions(torch.export.export(eager, _example()))))
    assert not any(node.op == "call_function" and "jitamp" in str(node.target) for node in _nodes(program))


# nested: two `y.float()` of one value, which freezing would merge into one
# cast (the gradient through them then summed in another order).
@pytest.mark.parametrize("name", ["simple", "flags", "early_return", "nested", "submodules"])
def test_gradients_of_the_exported_program_are_eagers(name):
    eager = _model(name).train()
    args = _example()
    program = jitamp.export(script(eager), args)
    module = program.module()
    sides = []
    for fn, params in ((eager, dict(eager.named_parameters())), (module, dict(module.named_parameters()))):
        (x,) = clone_args(args, requires_grad=True)
        out = fn(x)
        out.float().sum().backward()
        sides.append((out, x.grad, {k: p.grad for k, p in sorted(params.items())}))
        for p in params.values():
            p.grad = None
    (e_out, e_dx, e_grads), (p_out, p_dx, p_grads) = sides
    assert_same(e_out, p_out)
    assert_same(e_dx, p_dx, what="input gradient")
    assert e_grads.keys() == p_grads.keys()
    for key in e_grads:
        assert_same(e_grads[key], p_grads[key], what=f"gradient of {key}")


@pytest.mark.parametrize("name", ["lstm_lm", "transformer", "resnet"])
def test_gradients_of_real_architectures_are_eagers(name):
    """Train mode, ep.module() with grad: the LSTM's weights (read through
    its _flat_weights list) and the tied decoder weight are the program's
    parameters, one parameter for the tied pair as in eager; BatchNorm's
    running statistics are updated as eager's are."""
    eager = architectures.build(name).train()
    args = tuple(architectures.inputs(name))
    program = jitamp.export(script(eager), args)
    module = program.module()
    assert {n for n, _ in module.named_parameters()} == {n for n, _ in eager.named_parameters()}
    sides = []
    for fn in (eager, module):
        out = fn(*args)
        architectures._loss(out).backward()
        sides.append((out, {n: p.grad for n, p in fn.named_parameters()},
                      {n: b.clone() for n, b in fn.named_buffers()}))
    (e_out, e_grads, e_buffers), (p_out, p_grads, p_buffers) = sides
    assert_same(e_out, p_out)
    for key in e_grads:
        assert_same(e_grads[key], p_grads[key], what=f"gradient of {key}")
    for key in e_buffers:
        assert_same(e_buffers[key], p_buffers[key], what=f"buffer {key} after the call")


def test_explicit_casts_are_refused_with_grad_on():
    """The explicit-casts program is torch.export's ATen-level trace, made
    under no_grad: its gradients are not eager's (one cast per use where
    eager's cast cache makes one, BatchNorm's statistics written back), so
    it is refused for a program to train, naming what to do."""
    eager = architectures.build("lstm_lm").train()
    state = autocast_state()
    with pytest.raises(jitamp.ExportError, match=r"under torch.no_grad\(\)"):
        jitamp.export(script(eager), tuple(architectures.inputs("lstm_lm")), explicit_casts=True)
    assert autocast_state() == state


def test_explicit_casts_leave_the_programs_state_as_the_models():
    """The explicit-casts check runs both forms on the example; a model in
    training mode (BatchNorm's statistics) keeps its state in the program
    as exported, and a call updates it as eager's call does."""
    eager = architectures.build("resnet").train()
    args = tuple(architectures.inputs("resnet"))
    with torch.no_grad():
        program = jitamp.export(script(eager), args, explicit_casts=True)
        module = program.module()
        for name, buffer in eager.named_buffers():
            assert_same(buffer, module.get_buffer(name), what=f"buffer {name} as exported")
        assert_same(eager(*args), module(*args))
        for name, buffer in eager.named_buffers():
            assert_same(buffer, module.get_buffer(name), what=f"buffer {name} after a call")


def test_explicit_casts_write_out_the_casts_inside_composite_ops():
    """einsum (its bmm) and gru_cell (its linears) are composite ops eager's
    autocast does not cast, whose parts it casts: the program written with
    explicit casts holds those parts' casts, no region, and eager's bits."""

    class Composites(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = nn.GRUCell(8, 8)

        def forward(self, x: torch.Tensor, y: torch.Tensor):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                return torch.einsum("bij,bjk->bik", x, y), self.cell(x[0])

    eager = Composites().eval()
    args = (torch.randn(2, 8, 8), torch.randn(2, 8, 8))
    with torch.no_grad():
        program = jitamp.export(script(eager), args, explicit_casts=True)
    assert not _regions(program)
    targets = [node.target for node in program.graph.nodes if node.op == "call_function"]
    assert torch.ops.aten.bmm.default in targets and torch.ops.aten.addmm.default in targets
    assert torch.ops.aten.einsum.default not in targets and torch.ops.aten.gru_cell.default not in targets
    _check_inference(eager, program, args)
    _check_inference(eager, _export_saved_and_loaded(program), args)


@pytest.mark.parametrize("explicit_casts", [False, True], ids=["regions", "explicit_casts"])
def test_the_encoder_layers_fast_path_is_written_out_as_its_kernel(explicit_casts):
    """nn.TransformerEncoderLayer's fast path under no_grad is one op,
    _transformer_encoder_layer_fwd, whose kernel calls attention and
    linears that eager's autocast casts: both forms hold those ops instead
    (jitamp/_written_out.py), with explicit casts their casts too, and
    eager's bits; a compiler that runs the op whole without autocast
    (AOTInductor, in a region) gets eager's ops."""
    eager = export_models.build("encoder_post_norm")
    args = tuple(export_models.inputs("encoder_post_norm"))
    scripted = script(eager)
    with torch.no_grad():
        program = _export_or_skip_without_a_fake_kernel(scripted, args, explicit_casts=explicit_casts)
    targets = [node.target for node in _nodes(program) if node.op == "call_function"]
    assert torch.ops.aten._transformer_encoder_layer_fwd.default not in targets
    assert torch.ops.aten._native_multi_head_attention.default in targets, targets
    assert (torch.ops.aten._to_copy.default in targets) == explicit_casts
    assert bool(_regions(program)) != explicit_casts
    _check_inference(eager, program, args)
    _check_inference(eager, _export_saved_and_loaded(program), args)


class Arithmetic(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = torch.mm(x, x) / 8.0
            y = (y + 1.5) * 2 - 0.5
            y = torch.div(y, 3.0, rounding_mode="floor") + y // 2.0
            y = y.clone().add_(1.0).mul_(0.5).sub_(2).div_(4.0)
        return y


def _arithmetic(program) -> list[str]:
    names = ("add", "sub", "mul", "div", "floor_divide")
    return sorted(str(node.target) for node in _nodes(program)
                  if isinstance(node.target, torch._ops.OpOverload) and node.target._opname.rstrip("_") in names)


def test_arithmetic_with_numbers_is_recorded_as_eager_python_calls_it():
    """TorchScript calls div.Scalar for `x / 8.0` where eager Python calls
    div.Tensor with the number wrapped (add, sub, mul, floor_divide and
    the in-place ones alike): the same kernel in eager, other bits once
    AOTInductor compiles them. Both forms record the overloads eager's
    export records."""
    eager = Arithmetic()
    args = (torch.randn(4, 4),)
    with torch.no_grad():
        anchor = torch.export.export(eager, args)
        regions = jitamp.export(script(eager), args)
        explicit = jitamp.export(script(eager), args, explicit_casts=True)
    assert any(".Tensor" in name for name in _arithmetic(anchor)), _arithmetic(anchor)
    assert _arithmetic(regions) == _arithmetic(anchor)
    assert _arithmetic(explicit) == _arithmetic(anchor.run_decompositions({}))
    _check_inference(eager, regions, args)
    _check_inference(eager, explicit, args)


def test_a_model_converted_with_add_autocast_exports_its_region():
    torch.manual_seed(0)
    plain = nn.Sequential(nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 4)).eval()
    converted = _saved_and_loaded(script_without_jitamp(plain))
    jitamp.add_autocast(converted, "cpu", torch.bfloat16)
    program = jitamp.export(_saved_and_loaded(converted), _example())
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        expected = plain(*_example())
    with torch.no_grad():
        assert_same(expected, program.module()(*_example()))


@pytest.mark.parametrize("name", ["resnet", "mobilenet"])
def test_real_architectures_export_as_eager_runs(name):
    eager = architectures.build(name)
    args = tuple(architectures.inputs(name))
    program = jitamp.export(script(eager), args)
    _check_inference(eager, program, args)


def _export_or_skip_without_a_fake_kernel(scripted, args, **kwargs):
    """jitamp.export(scripted, args, **kwargs), or a skip where torch has no
    fake kernel for the fast path's attention (_native_multi_head_attention:
    torch 2.6, where a trace with static shapes runs the CPU kernel on
    zeros instead, and one with dynamic shapes cannot; eager's own export
    fails alike). jitamp.export says so with an ExportError naming the
    line."""
    try:
        return jitamp.export(scripted, args, **kwargs)
    except jitamp.ExportError as error:
        chain, cause = [], error
        while cause is not None:
            chain.append(str(cause))
            cause = cause.__cause__ or cause.__context__
        if "_native_multi_head_attention" in str(error) and any(
                "no fake impl or Meta kernel registered" in text for text in chain):
            assert "transformer.py" in str(error)
            pytest.skip(f"torch {torch.__version__} has no fake kernel for aten::_native_multi_head_attention "
                        f"(the fast path eager takes under no_grad)")
        raise


@pytest.mark.parametrize("explicit_casts", [False, True], ids=["regions", "explicit_casts"])
@pytest.mark.parametrize("name", export_models.MODELS)
def test_models_export_as_eager_runs(name, explicit_casts):
    """Every model of export_models (the constructs PyTorch's converter
    fails on, the kinds of module of its own tests, the real architectures),
    exported under torch.no_grad() as a server runs it, in both forms."""
    eager = export_models.build(name)
    args = tuple(export_models.inputs(name))
    scripted = script(eager)
    state = autocast_state()
    with torch.no_grad():
        program = _export_or_skip_without_a_fake_kernel(scripted, args, explicit_casts=explicit_casts)
    assert autocast_state() == state
    assert bool(_regions(program)) != explicit_casts or not _regions(torch.export.export(eager, args))
    _check_inference(eager, program, args)
    _check_inference(eager, _export_saved_and_loaded(program), args)


@pytest.mark.parametrize("name", ["transformer", "lstm_lm", "segmentation"])
def test_what_pytorchs_converter_cannot_convert_exports_as_eager_runs(name):
    """The anchor: PyTorch's own converter (TS2EPConverter) fails on the
    scope-free twin scripted without jitamp; jitamp.export is exact, with
    grad mode on as well (the transformer's fast-path checks read it)."""
    from torch._export.converter import TS2EPConverter

    args = tuple(architectures.inputs(name))
    with pytest.raises(Exception):
        TS2EPConverter(script_without_jitamp(architectures.build(name, plain=True)), args).convert()
    eager = architectures.build(name)
    program = jitamp.export(script(eager), args)
    expected = eager(*args)
    for call in range(3):
        assert_same(expected, program.module()(*args), what=f"call {call + 1}")


def test_a_model_that_reads_the_grad_mode_says_which_one_its_program_keeps():
    eager = export_models.build("encoder_post_norm")  # (pre-norm's checks stop at norm_first)
    with torch.no_grad(), pytest.warns(UserWarning, match=r"(?s)is_grad_enabled.*grad mode off.*modules/(transformer|activation).py"):
        jitamp.export(script(eager), tuple(export_models.inputs("encoder_post_norm")))


def _batch(name: str, size: int) -> tuple:
    if name == "transformer":
        return (torch.randn(size, 5, 6), torch.zeros(size, 5, dtype=torch.bool))
    return (torch.randn(size, *export_models.inputs(name)[0].shape[1:]),)


@pytest.mark.parametrize("name", ["resnet", "containers", "transformer"])
def test_a_dynamic_batch_runs_as_eager_at_other_sizes(name):
    """dynamic_shapes= as torch.export.export of the eager model takes it
    (a batch dimension by the forward's argument names), two batch sizes."""
    from torch.export import Dim

    eager = export_models.build(name)
    names = list(inspect.signature(eager.forward).parameters)
    spec = {argument: {0: Dim("batch", min=2, max=64)} for argument in names}
    torch.export.export(eager, _batch(name, 3), dynamic_shapes=spec)  # eager's own export takes it
    with torch.no_grad():
        program = _export_or_skip_without_a_fake_kernel(script(eager), _batch(name, 3), dynamic_shapes=spec)
    for size in (3, 7):
        _check_inference(eager, program, _batch(name, size))


def test_a_dynamic_batch_eagers_export_refuses_is_refused():
    """A branch on the batch size: torch.export of the eager model refuses
    the spec too."""
    from torch.export import Dim

    spec = {"x": {0: Dim("batch", min=2, max=64)}}
    with pytest.raises(jitamp.ExportError, match="batch"):
        jitamp.export(script(export_models.build("shape_branches")), _batch("shape_branches", 4),
                      dynamic_shapes=spec)


class DataDependent(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = torch.mm(x, x)
            if y.sum() > 0:
                y = y * 2
            return y


def test_a_branch_on_a_tensors_value_is_refused_naming_its_line():
    state = autocast_state()
    with pytest.raises(jitamp.ExportError, match=r"(?s)aten::Bool.*test_export.py.*y.sum\(\) > 0"):
        jitamp.export(script(DataDependent()), (torch.randn(4, 4),))
    assert autocast_state() == state, "a failed export left the thread's autocast state changed"


class RunTimeFlag(nn.Module):
    def forward(self, x: Tensor, enabled: bool) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=enabled):
            return torch.mm(x, x)


class Forked(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            future = torch.jit.fork(torch.mm, x, x)
            return torch.jit.wait(future)


def test_a_scope_without_dtype_warns_which_dtype_its_region_runs_in():
    with pytest.warns(UserWarning, match=r"(?s)without dtype= runs in torch.bfloat16.*test_export.py"):
        jitamp.export(script(_model("dtype_left_out")), _example())


def test_a_run_time_autocast_argument_is_refused_naming_its_line():
    with pytest.raises(jitamp.ExportError, match=r"(?s)enabled is known only at run time.*test_export.py"):
        jitamp.export(script(RunTimeFlag()), (torch.randn(4, 4), True))


def test_a_fork_is_refused_naming_its_line():
    with pytest.raises(jitamp.ExportError, match=r"(?s)no forks.*test_export.py"):
        jitamp.export(script(Forked()), (torch.randn(4, 4),))


def test_an_eager_module_is_refused():
    with pytest.raises(TypeError, match="scripted or loaded"):
        jitamp.export(Simple(), _example())


def test_older_torch_gets_a_clear_error():
    from jitamp import _export

    if EXPORT:
        _export._check_torch()
    else:
        with pytest.raises(RuntimeError, match="wrap_with_autocast"):
            jitamp.export(script(Simple()), _example())


def test_cli_writes_a_program_that_loads_without_jitamp(tmp_path):
    eager = _model("nested").eval()
    with torchscript_deprecation_ignored():
        torch.jit.save(script_without_jitamp(eager), str(tmp_path / "model.pt"))
    torch.save(_example(), str(tmp_path / "args.pt"))
    with torch.no_grad():
        torch.save(eager(*_example()), str(tmp_path / "expected.pt"))
    done = _jitamp_cli(tmp_path, "export", "model.pt", "args.pt", "model.pt2")
    assert done.returncode == 0, done.stderr
    assert "3 autocast regions" in done.stdout
    _check_without_jitamp(tmp_path, "x, = torch.load('args.pt', weights_only=True)\n"
                                    "e = torch.load('expected.pt', weights_only=True)\n"
                                    "with torch.no_grad(): o = ep.module()(x)\n"
                                    "assert o.dtype == e.dtype and torch.equal(o, e), (o.dtype, e.dtype)\n")


# TorchScript's deprecation, which torch 2.14+ prints on every load (a
# FutureWarning; filtered in tests, never in the library)
TORCHSCRIPT_DEPRECATION = "ignore:`torch.jit.:FutureWarning"


def _jitamp_cli(directory, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-W", TORCHSCRIPT_DEPRECATION, "-m", "jitamp", *args], cwd=directory, capture_output=True, text=True,
                          timeout=300)


def test_the_first_export_of_a_process_records_only_the_models_ops(tmp_path):
    """In a fresh process (jitamp's lazily asked tables not yet filled),
    the program holds the ops torch.export makes of the eager model, and
    nothing the interpreter did to prepare itself."""
    script_text = (
        "import sys, collections, torch, jitamp\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "import test_export\n"
        "eager = test_export._model('simple').eval()\n"
        "def ops(program):\n"
        "    return collections.Counter(str(node.target) for node in test_export._nodes(program)\n"
        "                               if node.op == 'call_function')\n"
        "got = ops(jitamp.export(test_export.script(eager), test_export._example()))\n"
        "expected = ops(torch.export.export(eager, test_export._example()))\n"
        "assert got == expected, (got - expected, expected - got)\n")
    done = subprocess.run([sys.executable, "-W", TORCHSCRIPT_DEPRECATION, "-c", script_text,
                           os.path.dirname(os.path.abspath(__file__))], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]


def _check_without_jitamp(directory, check: str) -> None:
    """Runs `check` in a fresh process that never imports jitamp, with
    `ep` the program directory/model.pt2 holds, loaded by torch.export.load.
    Where that load needs torch._higher_order_ops.wrap imported first
    (torch 2.6's deserializer), so must eager's own export's."""
    prelude = ("import sys, torch\n"
               "try:\n"
               "    ep = torch.export.load('model.pt2')\n"
               "except Exception as error:\n"
               "    assert 'wrap_with_autocast' in str(error), error\n"
               "    import torch._higher_order_ops.wrap\n"
               "    print('PYTORCH_NEEDS_THE_IMPORT')\n"
               "    ep = torch.export.load('model.pt2')\n")
    done = subprocess.run([sys.executable, "-W", "ignore", "-c",
                           prelude + check + "assert 'jitamp' not in sys.modules\n"],
                          cwd=directory, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    if "PYTORCH_NEEDS_THE_IMPORT" in done.stdout:  # (docs/exporting.md, torch versions)
        assert _eagers_program_needs_the_import_too(directory), "only jitamp's program needs the import"


def _eagers_program_needs_the_import_too(directory) -> bool:
    """Whether torch.export.export's program of an eager autocast module
    fails to load in a fresh process until torch._higher_order_ops.wrap is
    imported (torch 2.6's deserializer)."""
    torch.export.save(torch.export.export(_model("simple").eval(), _example()), str(directory / "eager.pt2"))
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", "import torch; torch.export.load('eager.pt2')"],
                          cwd=directory, capture_output=True, text=True, timeout=300)
    return done.returncode != 0 and "wrap_with_autocast" in done.stderr


def scope_in_a_function(x: Tensor, w: Tensor) -> Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return torch.mm(x, w).relu()


@pytest.mark.parametrize("how", ["jitamp", "plain"])
def test_a_scripted_function_exports_as_eager_runs(how):
    scripted = (script if how == "jitamp" else script_without_jitamp)(scope_in_a_function)
    args = (torch.randn(4, 4), torch.randn(4, 4))
    program = jitamp.export(scripted, args)
    with torch.no_grad():
        assert_same(scope_in_a_function(*args), program.module()(*args))


def _aot_inductor_runs_the_program_as_eager_modules_export(name: str, directory: str) -> None:
    eager = _model(name).eval()
    outputs = []
    for index, program in enumerate((torch.export.export(eager, _example()),
                                     jitamp.export(script(eager), _example()))):
        try:
            path = torch._inductor.aoti_compile_and_package(program, package_path=f"{directory}/{index}.pt2")
            with torch.no_grad():
                outputs.append(torch._inductor.aoti_load_package(path)(*_example()))
        except Exception as error:
            if index == 0:  # the anchor itself
                print(f"ANCHOR_FAILS: {str(error).strip().splitlines()[0][:300]}")
                return
            raise
    assert_same(outputs[0], outputs[1])
    if name == "simple":
        with torch.no_grad():
            assert_same(eager(*_example()), outputs[0])


@pytest.mark.parametrize("name", ["simple", "nested"])
def test_aot_inductor_runs_the_program_as_it_runs_eager_modules_export(name, tmp_path):
    """AOTInductor compiles the program's regions as it compiles those of
    torch.export.export of the eager module: the same bits (bitwise eager
    where Inductor keeps eager's kernels, as for simple; nested's fused
    casts and matmuls differ from eager, for both alike). In a process of
    its own: on torch 2.15 AOTInductor asks the accelerator for its
    DeviceAllocator, which, once a test has registered the jitamptest
    backend (test_backend_sanity.py does as pytest collects it), is that
    backend's, a plain c10::Allocator."""
    check = (f"import sys; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r}); "
             f"import test_export; test_export._aot_inductor_runs_the_program_as_eager_modules_export("
             f"{name!r}, {str(tmp_path)!r})")
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", check], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    if "ANCHOR_FAILS" in done.stdout:
        pytest.skip(f"AOTInductor of torch.export.export(eager) fails on torch {torch.__version__} too: "
                    + done.stdout.split("ANCHOR_FAILS: ", 1)[1].strip())


def test_cli_writes_the_explicit_casts_form(tmp_path):
    eager = _model("nested").eval()
    with torchscript_deprecation_ignored():
        torch.jit.save(script_without_jitamp(eager), str(tmp_path / "model.pt"))
    torch.save(_example(), str(tmp_path / "args.pt"))
    done = _jitamp_cli(tmp_path, "export", "--explicit-casts", "model.pt", "args.pt", "model.pt2")
    assert done.returncode == 0, done.stderr
    assert "no autocast region" in done.stdout and "explicit casts" in done.stdout
    program = torch.export.load(str(tmp_path / "model.pt2"))
    assert not _regions(program)
    _check_inference(eager, program, _example())


@pytest.mark.parametrize("command", ["convert", "export"])
def test_a_failed_save_leaves_the_file_it_would_replace_intact(command, tmp_path, monkeypatch, capsys):
    """`jitamp convert m.pt m.pt` rewrites the model in place: a save that
    fails half-way (here after writing part of its file) must leave the
    original as it was, and no temporary file behind."""
    from jitamp import cli

    model = tmp_path / "model.pt"
    with torchscript_deprecation_ignored():
        torch.jit.save(script_without_jitamp(_model("simple").eval()), str(model))
    torch.save(_example(), str(tmp_path / "args.pt"))
    target = model if command == "convert" else tmp_path / "model.pt2"
    target.write_bytes(model.read_bytes()) if command == "export" else None
    before = target.read_bytes()

    def failing_save(_obj, path, *args, **kwargs):
        with open(path, "wb") as partial:
            partial.write(b"half a model")
        raise OSError("No space left on device")

    monkeypatch.setattr(torch.jit if command == "convert" else torch.export, "save", failing_save)
    argv = [command, str(model), str(model)] if command == "convert" else [
        command, str(model), str(tmp_path / "args.pt"), str(target)]
    assert cli.main(argv) != 0
    assert "No space left on device" in capsys.readouterr().err
    assert target.read_bytes() == before
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(
        {"model.pt", "args.pt", target.name}), "a temporary file was left behind"


def test_cli_exports_a_dynamic_batch(tmp_path):
    """`jitamp export --dynamic-batch`: the program, loaded in a process
    without jitamp, runs at other batch sizes as eager does."""
    eager = export_models.build("containers")
    with torchscript_deprecation_ignored():
        torch.jit.save(script_without_jitamp(eager), str(tmp_path / "model.pt"))
    torch.save(tuple(_batch("containers", 3)), str(tmp_path / "args.pt"))
    batches = [_batch("containers", size) for size in (1, 5, 9)]
    with torch.no_grad():
        torch.save([(b, eager(*b)) for b in batches], str(tmp_path / "expected.pt"))
    done = _jitamp_cli(tmp_path, "export", "--dynamic-batch", "model.pt", "args.pt", "model.pt2")
    assert done.returncode == 0, done.stderr
    _check_without_jitamp(tmp_path, "for args, expected in torch.load('expected.pt', weights_only=True):\n"
                                    "    with torch.no_grad(): out = ep.module()(*args)\n"
                                    "    for o, e in zip(out, expected):\n"
                                    "        assert o.dtype == e.dtype and torch.equal(o, e), "
                                    "(args[0].shape, o.dtype, e.dtype)\n")


def test_cli_refuses_a_dynamic_batch_the_model_fixes(tmp_path):
    with torchscript_deprecation_ignored():
        torch.jit.save(script_without_jitamp(export_models.build("shape_branches")), str(tmp_path / "model.pt"))
    torch.save(tuple(_batch("shape_branches", 4)), str(tmp_path / "args.pt"))
    done = _jitamp_cli(tmp_path, "export", "--dynamic-batch", "model.pt", "args.pt", "model.pt2")
    assert done.returncode == 2, done.stderr
    assert "cannot export model.pt" in done.stderr and "batch" in done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert not (tmp_path / "model.pt2").exists()


@pytest.mark.parametrize("suffix", [".onnx", ".pte"])
def test_cli_writes_onnx_and_executorch_by_the_outputs_suffix(suffix, tmp_path):
    """`jitamp export m.pt args.pt m.onnx` (m.pte): the file the runtime
    loads, run to eager's dtypes and values (float16 for onnxruntime, whose
    CPU kernels take no bfloat16); an unknown suffix is one clear line."""
    extra, runtime = {".onnx": ("onnx", "onnxruntime"), ".pte": ("executorch", "executorch")}[suffix]
    if importlib.util.find_spec(runtime) is None:
        pytest.skip(f"{runtime} is not installed (pip install jitamp[{extra}])")
    models = export_models.in_dtype(torch.float16 if suffix == ".onnx" else torch.bfloat16)
    eager, args = models.build("containers"), tuple(models.inputs("containers"))
    with torchscript_deprecation_ignored():
        torch.jit.save(script_without_jitamp(eager), str(tmp_path / "model.pt"))
    torch.save(args, str(tmp_path / "args.pt"))
    done = _jitamp_cli(tmp_path, "export", "model.pt", "args.pt", "model" + suffix)
    assert done.returncode == 0, done.stderr
    assert "no autocast region" in done.stdout
    path = str(tmp_path / f"model{suffix}")
    if suffix == ".onnx":
        import onnxruntime
        session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
        got = [torch.from_numpy(out) for out in session.run(None, {i.name: a.numpy() for i, a in
                                                                   zip(session.get_inputs(), args)})]
    else:
        from executorch.runtime import Runtime
        got = list(Runtime.get().load_program(path).load_method("forward").execute(list(args)))
    with torch.no_grad():
        expected = torch.utils._pytree.tree_leaves(eager(*args))
    assert_same(expected, got, exact=False, rtol=0, atol_of_max=2 ** -6)
    bad = _jitamp_cli(tmp_path, "export", "model.pt", "args.pt", "model.tflite")
    assert bad.returncode == 2 and "OUT.pt2 (torch.export), OUT.onnx (ONNX) or OUT.pte" in bad.stderr
    assert bad.stderr.count("\n") == 1
