"""A rewritten model saved with torch.jit.save runs as eager does under every
Python loader: torch.jit.load (after `import jitamp`) and jitamp.load, for a
model scripted with jitamp enabled and for one converted from a plain saved
model (`jitamp convert`). C++ loaders: tests/test_cpp_deploy.py.

The model carries a loader object (python/jitamp/_loader.py) whose
__setstate__ configures it while it is loaded; without it, PyTorch's
built-in JIT autocast runs on the loaded graph at its first call under an
eager autocast (bfloat16 where eager gives float32 behind the scripted
enabled=False scope), and the profiling executor's symbolic autodiff
handles training.
"""
from __future__ import annotations

import copy
import subprocess
import sys

import pytest
import torch
from torch import nn

import jitamp
from oracle import (check_against_eager, cpu_autocast, save_without_jitamp, script, script_without_jitamp,
                    torchscript_deprecation_ignored)


class IssueModel(nn.Module):
    """The model of issue 10: a Linear outside any scope, then a scripted
    autocast-disabled region."""

    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8)

    def forward(self, x):
        y = self.l(x)
        with torch.autocast("cpu", enabled=False):
            z = torch.mm(y.float(), y.float().t())
        return z


class ScopedModel(nn.Module):
    """A bfloat16 region with an fp32 region inside, and a submodule call."""

    def __init__(self):
        super().__init__()
        self.inner = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.LayerNorm(16))
        self.out = nn.Linear(16, 8)

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            h = self.inner(x)
            with torch.autocast("cpu", enabled=False):
                s = torch.softmax(h.float() @ h.float().t(), dim=-1)
            y = self.out(s @ h)
        return y + x


class ForkingModel(nn.Module):
    """A submodule forked inside a float16 region and waited on outside it:
    the saved task must still adopt the region's dtype."""

    def __init__(self):
        super().__init__()
        self.branch = nn.Linear(8, 8)
        self.l = nn.Linear(8, 8)

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.float16):
            fut = torch.jit.fork(self.branch, x)
            y = self.l(x)
        return torch.jit.wait(fut).float() + y.float()


MODELS = {"issue": IssueModel, "scoped": ScopedModel, "forking": ForkingModel}
CASES = {
    "plain": None,
    "outer_bf16": cpu_autocast(torch.bfloat16),
    "outer_fp16": cpu_autocast(torch.float16),
}


def _save_scripted(model: nn.Module, path: str) -> None:
    with torchscript_deprecation_ignored():
        torch.jit.save(script(model), path)


def _save_converted(model: nn.Module, path: str) -> None:
    """Scripted and saved without jitamp, then `jitamp convert`."""
    plain = path + ".plain.pt"
    save_without_jitamp(model, plain)
    done = subprocess.run([sys.executable, "-m", "jitamp", "convert", plain, path],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


SAVERS = {"scripted": _save_scripted, "converted": _save_converted}
LOADERS = {"torch.jit.load": torch.jit.load, "jitamp.load": jitamp.load}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("loader", list(LOADERS))
@pytest.mark.parametrize("saver", list(SAVERS))
@pytest.mark.parametrize("name", list(MODELS))
def test_loaded_model_equals_eager(tmp_path, name, saver, loader, case):
    torch.manual_seed(0)
    model = MODELS[name]()
    path = str(tmp_path / "model.pt")
    SAVERS[saver](model, path)
    x = torch.randn(4, 8)
    for grad in (False, True):  # inference, then training (input gradients)
        loaded = LOADERS[loader](path)  # fresh: nothing of it has run
        check_against_eager(model, [x], scripted=loaded, outer=CASES[case], grad=grad)


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("name", list(MODELS))
def test_model_in_a_torch_package_equals_eager(tmp_path, monkeypatch, name, case):
    """torch.package (PackageExporter.save_pickle of a scripted model, a
    beta feature behind a gate) stores the model as torch.jit.save does, and
    PackageImporter.load_pickle unpickles its objects, the loader's
    included."""
    from torch.package import PackageExporter, PackageImporter, package_exporter
    monkeypatch.setattr(package_exporter, "_gate_torchscript_serialization", False)
    torch.manual_seed(0)
    model = MODELS[name]()
    path = str(tmp_path / "model.zip")
    with torchscript_deprecation_ignored(), PackageExporter(path) as exporter:
        exporter.save_pickle("model", "model.pkl", script(copy.deepcopy(model)))
    x = torch.randn(4, 8)
    for grad in (False, True):
        with torchscript_deprecation_ignored():
            loaded = PackageImporter(path).load_pickle("model", "model.pkl")
        check_against_eager(model, [x], scripted=loaded, outer=CASES[case], grad=grad)


def addmm_in_scope(b, x, y):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        z = torch.addmm(b, x, y)
    with torch.autocast("cpu", enabled=False):
        return torch.mm(z.float(), y)


def addmm_without_jitamp(b, x, y):
    return torch.addmm(b, x, y)


def _save_function(function, path: str, to_buffer: bool) -> None:
    with torchscript_deprecation_ignored():
        if to_buffer:
            with open(path, "wb") as f:
                torch.jit.save(function, f)  # ScriptFunction.save_to_buffer
        else:
            torch.jit.save(function, path)  # ScriptFunction.save


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("loader", list(LOADERS))
@pytest.mark.parametrize("to_buffer", [False, True], ids=["to-path", "to-buffer"])
def test_saved_function_equals_eager(tmp_path, to_buffer, loader, case):
    """torch.jit.save of a scripted function saves a module whose forward
    is the function, which no loader object configured: torch.jit.load ran
    it on the profiling executor, whose DecomposeOps split the bfloat16
    addmm into mm + add (rounding twice: other values from the first
    call). A function jitamp rewrote is saved with the loader."""
    path = str(tmp_path / "function.pt")
    _save_function(script(addmm_in_scope), path, to_buffer)
    b, x, y = torch.randn(3, 16, 16).unbind()
    for grad in (False, True):
        loaded = LOADERS[loader](path)  # fresh: nothing of it has run
        assert loaded._c.hasattr("_jitamp_loader")
        check_against_eager(addmm_in_scope, [b, x, y], scripted=loaded, outer=CASES[case], grad=grad)


def addmm_traced(b, x, y):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return torch.addmm(b, x, y)


def test_saved_traced_function_equals_eager(tmp_path):
    """A function traced with jitamp enabled is rewritten as a scripted one
    (jitamp/_tracing.py) and saved with the loader as well."""
    path = str(tmp_path / "traced.pt")
    b, x, y = torch.randn(3, 16, 16).unbind()
    with torchscript_deprecation_ignored(), jitamp.enable():
        torch.jit.save(torch.jit.trace(addmm_traced, (b, x, y)), path)
    loaded = torch.jit.load(path)
    assert loaded._c.hasattr("_jitamp_loader")
    check_against_eager(addmm_traced, [b, x, y], scripted=loaded, grad=True)


def test_function_jitamp_did_not_rewrite_saves_as_torch_saves_it(tmp_path):
    path = str(tmp_path / "function.pt")
    plain = script_without_jitamp(addmm_without_jitamp)
    with torchscript_deprecation_ignored():
        torch.jit.save(plain, path)
        loaded = torch.jit.load(path)
    assert not loaded._c.hasattr("_jitamp_loader")
    assert "jitamp" not in loaded.code


def test_loaded_in_a_process_with_builtin_jit_autocast_on(tmp_path):
    """The usual server: `import jitamp; torch.jit.load(...)`, jitamp never
    enabled, PyTorch's built-in JIT autocast on (its default)."""
    torch.manual_seed(0)
    model = IssueModel()
    path = str(tmp_path / "model.pt")
    _save_scripted(model, path)
    x = torch.randn(4, 8)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        expected = model(x)
    code = f"""
import warnings, torch, jitamp
warnings.simplefilter("ignore")
assert not jitamp.is_enabled() and torch._C._jit_set_autocast_mode(True)
m = torch.jit.load({path!r})
x = torch.load({str(tmp_path / 'x.pt')!r}, weights_only=True)
outs = []
for _ in range(3):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        outs.append(m(x))
torch.save(outs, {str(tmp_path / 'outs.pt')!r})
"""
    torch.save(x, str(tmp_path / "x.pt"))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    for out in torch.load(str(tmp_path / "outs.pt"), weights_only=True):
        assert out.dtype == expected.dtype and torch.equal(out, expected)


def test_loader_object_is_saved_with_the_model(tmp_path):
    torch.manual_seed(0)
    model = ScopedModel()
    path = str(tmp_path / "model.pt")
    _save_scripted(model, path)
    loaded = torch.jit.load(path)
    assert loaded._c.hasattr("_jitamp_loader")
    # Saved again, loaded again: still there, still configures the model.
    torch.jit.save(loaded, path)
    again = torch.jit.load(path)
    assert again._c.hasattr("_jitamp_loader")
    check_against_eager(model, [torch.randn(2, 8)], scripted=again,
                        outer=cpu_autocast(torch.float16), grad=True)


@pytest.mark.parametrize("profiling_executor", [False, True], ids=["simple", "profiling"])
def test_second_object_of_a_scripted_type_carries_its_loader(tmp_path, profiling_executor):
    """torch.jit.script of a second object of a module type it compiled for
    an earlier one reuses the type (methods, attribute slots) and calls no
    emit hook: the object's loader slot stayed None, so saved and loaded,
    nothing configured the model, and PyTorch's built-in JIT autocast ran
    on it (bfloat16 where eager gives float32 behind the scripted
    enabled=False scope); freezing it failed in jitamp's freeze wrapper.
    jitamp fills the slot of every object torch.jit.script makes while it
    is enabled, submodules' too, for the executor its type was rewritten
    for."""
    torch.manual_seed(0)
    model = ScopedModel()
    with torchscript_deprecation_ignored(), jitamp.enable(profiling_executor=profiling_executor):
        torch.jit.script(ScopedModel())
        second = torch.jit.script(model)
    for module in [second, *second.modules()]:
        loader = module._c.getattr("_jitamp_loader")
        assert loader is not None and loader.simple_executor is not profiling_executor, module.original_name
    path = str(tmp_path / "model.pt")
    with torchscript_deprecation_ignored():
        torch.jit.save(second, path)
    check_against_eager(model, [torch.randn(2, 8)], scripted=torch.jit.load(path),
                        outer=cpu_autocast(torch.bfloat16))
    with torchscript_deprecation_ignored(), torch.no_grad():
        frozen = torch.jit.freeze(second.eval())
        check_against_eager(model.eval(), [torch.randn(2, 8)], scripted=frozen,
                            outer=cpu_autocast(torch.bfloat16))


@pytest.mark.parametrize("helper_ran", [True, False], ids=["helper_ran", "helper_not_run"])
@pytest.mark.parametrize("source", ["scripted", "loaded"])
def test_deep_copy_runs_as_eager_and_leaves_other_scripted_code_alone(tmp_path, source, helper_ran):
    """TorchScript deep-copies an object through its __getstate__ and
    __setstate__, so copy.deepcopy of a rewritten model (and Module::deepcopy
    in C++) runs the loader's __setstate__. It rewrote every function of the
    class's compilation unit -- in Python the one unit of every function
    scripted in the process: it failed on plain scripted code that had run
    ("cannot rewrite ... it has already run") and silently rewrote plain
    code that had not. The copy shares its functions with the original,
    which jitamp configured already: nothing is to be done."""

    class PlainHelper(nn.Module):  # a class of its own: a type of its own
        def forward(self, x):
            return torch.mm(x, x.t())

    torch.manual_seed(0)
    model = ScopedModel()
    x = torch.randn(2, 8)
    helper = script_without_jitamp(PlainHelper())
    if helper_ran:
        helper(x)
    if source == "scripted":
        original = script(model)
    else:
        path = str(tmp_path / "model.pt")
        _save_scripted(model, path)
        with torchscript_deprecation_ignored():
            original = torch.jit.load(path)
    original(x)
    copied = copy.deepcopy(original)
    assert "jitamp::" not in str(helper.forward.graph)
    check_against_eager(model, [x], scripted=copied, outer=cpu_autocast(torch.float16), grad=True)
    with torch.no_grad():
        check_against_eager(model, [x], scripted=copied)
