"""Saved jitamp models: reloaded in a fresh process, frozen, optimized."""
import contextlib
import copy
import os
import subprocess
import sys
import textwrap

import pytest
import torch
from torch import nn

from oracle import check_against_eager, cpu_autocast, script

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class ConvModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1, bias=True)
        self.bn = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            h = torch.relu(self.bn(self.conv(x)))
            with torch.autocast("cpu", enabled=False):
                s = h.float().mean(dim=(2, 3))
            y = self.fc(s)
        return y


def _run_python(code):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "tests") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
                          cwd=ROOT)


def test_save_and_load_in_a_fresh_process(tmp_path):
    torch.manual_seed(0)
    model = ConvModel().eval()
    x = torch.randn(2, 3, 8, 8)
    torch.jit.save(script(model), str(tmp_path / "model.pt"))
    with torch.no_grad():
        torch.save({"x": x, "plain": model(x), "under_fp16": _under(model, x)}, str(tmp_path / "expected.pt"))
    result = _run_python(f"""
        import torch, jitamp
        from oracle import assert_same, torchscript_deprecation_ignored
        with torchscript_deprecation_ignored():
            model = jitamp.load({str(tmp_path / "model.pt")!r})
        expected = torch.load({str(tmp_path / "expected.pt")!r}, weights_only=True)
        with torch.no_grad():
            for call in range(4):
                assert_same(expected["plain"], model(expected["x"]))
                with torch.autocast("cpu", dtype=torch.float16):
                    assert_same(expected["under_fp16"], model(expected["x"]))
        print("OK")
    """)
    assert result.returncode == 0 and "OK" in result.stdout, result.stderr


def _under(model, x):
    with torch.autocast("cpu", dtype=torch.float16):
        return model(x)


def test_loading_without_jitamp_names_the_missing_op_and_the_fix(tmp_path):
    torch.jit.save(script(ConvModel().eval()), str(tmp_path / "model.pt"))
    result = _run_python(f"""
        import torch
        torch.jit.load({str(tmp_path / "model.pt")!r})
    """)
    assert result.returncode != 0
    # TorchScript's error names the op and shows the line, whose value name
    # jitamp chose to say what to do.
    assert "Unknown builtin op: jitamp::" in result.stderr
    assert "ops.jitamp.prepare_loaded(self, needs_import_jitamp)" in result.stderr, result.stderr


@pytest.mark.parametrize("transform", ["freeze", "optimize_for_inference"])
def test_frozen_and_optimized_models_match_eager(transform):
    torch.manual_seed(0)
    model = ConvModel().eval()
    transformed = getattr(torch.jit, transform)(script(copy.deepcopy(model)))
    x = torch.randn(2, 3, 8, 8)
    with torch.no_grad():
        check_against_eager(model, (x,), scripted=transformed)
        check_against_eager(model, (x,), scripted=transformed, outer=cpu_autocast(torch.float16))


class Residual(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = self.lin(x)
        return y + self.lin(x)


def test_loaded_model_after_rewrite_matches_eager_in_any_call_order(tmp_path):
    # How a function runs (executor, built-in autocast pass) is not saved
    # with a model: jitamp.rewrite sets it again on the loaded one, also
    # when jitamp is not enabled (the built-in JIT autocast on).
    import jitamp

    torch.manual_seed(0)
    model = Residual()
    torch.jit.save(script(model), str(tmp_path / "model.pt"))
    assert not jitamp.is_enabled()
    loaded = jitamp.load(str(tmp_path / "model.pt"))
    x = torch.randn(4, 8)
    check_against_eager(model, (x,), scripted=loaded, outer=cpu_autocast(), grad=True)
    with torch.no_grad():
        check_against_eager(model, (x,), scripted=loaded, outer=cpu_autocast())
    check_against_eager(model, (x,), scripted=loaded, grad=True)


def test_jitamp_load(tmp_path):
    import jitamp

    torch.manual_seed(0)
    model = Residual()
    torch.jit.save(script(model), str(tmp_path / "model.pt"))
    loaded = jitamp.load(str(tmp_path / "model.pt"))
    check_against_eager(model, (torch.randn(4, 8),), scripted=loaded, outer=cpu_autocast(), grad=True)


def test_saves_load_after_pytorch_test_teardowns(tmp_path):
    """PyTorch's JitTestCase, between tests, sets and clears its emit hooks
    and clears TorchScript's class registry, which frees the methods of
    every scripted class (jitamp's loader class too: a save after that wrote
    other code under the loader's name, a file that did not load). Its
    save/load checks run inside torch._jit_internal._disable_emit_hooks().
    Two such teardowns between scripted saves, for a module and a function
    on both executors: every file loads and runs as eager. In a fresh
    process: the clear frees the classes of every test before it."""
    script_file = tmp_path / "suite.py"  # TorchScript reads the source
    script_file.write_text(textwrap.dedent("""
        import io, torch, jitamp
        from oracle import assert_same, torchscript_deprecation_ignored

        def clear_class_registry():  # torch.testing._internal.jit_utils's (which needs numpy)
            torch._C._jit_clear_class_registry()
            torch.jit._recursive.concrete_type_store = torch.jit._recursive.ConcreteTypeStore()
            torch.jit._state._clear_class_state()

        class Scoped(torch.nn.Module):
            def forward(self, x):
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    return torch.mm(x, x).softmax(-1)

        def scoped(x):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                return torch.mm(x, x) + 1

        def relu(x):
            return x.relu()

        def teardown():  # JitTestCase.tearDown, after its setUp's hooks
            torch._C._jit_set_emit_hooks(lambda m: None, lambda f: None)
            torch._C._jit_set_emit_hooks(None, None)
            clear_class_registry()

        x = torch.randn(4, 4)
        saved = []
        with torchscript_deprecation_ignored():
            for profiling in (False, True):
                with jitamp.enable(profiling_executor=profiling):
                    for obj in (relu, Scoped(), scoped, Scoped()):
                        scripted = torch.jit.script(obj)
                        buffer = io.BytesIO()
                        with torch._jit_internal._disable_emit_hooks():
                            torch.jit.save(scripted, buffer)
                        saved.append((obj, buffer.getvalue()))
                        teardown()
                        teardown()
            for obj, data in saved:
                loaded = torch.jit.load(io.BytesIO(data))
                for call in range(3):
                    assert_same(obj(x), loaded(x))
                    with torch.autocast("cpu", dtype=torch.bfloat16):
                        assert_same(obj(x), loaded(x))
        print("OK", len(saved))
    """))
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "tests") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    result = subprocess.run([sys.executable, str(script_file)], capture_output=True, text=True, env=env, cwd=ROOT)
    assert result.returncode == 0 and "OK 8" in result.stdout, result.stderr


class RaisesInItsScope(nn.Module):
    """A scope whose block ends in a raise, after an early return (whose
    exit transform, compiling the saved code, drops what follows the
    raise): eager's mm there casts both operands to bfloat16 and runs
    (outside autocast, float16 against float32 raises), its result goes
    to `out`, then the raise leaves the scope."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 4))

    def forward(self, x, out, flag: bool):
        if not flag:
            return x
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out.copy_(torch.mm(x.half(), self.w))
            raise ValueError("stopped")
        return x


@pytest.mark.parametrize("freeze", [False, True], ids=["scripted", "frozen"])
def test_a_scope_that_ends_in_a_raise_keeps_its_state_when_loaded(tmp_path, freeze):
    """Compiling a saved model, TorchScript's exit transform drops what
    follows an unconditional raise, the scope's exit too: the loaded
    scope's guard had no use and was dropped at once, so the mm ran with
    autocast off and raised its dtype error (fuzz seed 112903, index
    40640). The loaded model raises eager's error after eager's write, and
    leaves the state as it was (repairs/restore_exits_cut_by_raises.h)."""
    model = RaisesInItsScope().eval()
    scripted = script(model)
    if freeze:
        scripted = torch.jit.freeze(scripted)
    torch.jit.save(scripted, str(tmp_path / "model.pt"))
    loaded = torch.jit.load(str(tmp_path / "model.pt"))
    x = torch.randn(4, 4)
    for outer in (None, cpu_autocast()):
        written = []
        for fn in (model, loaded):
            out = torch.zeros(4, 4)
            with torch.no_grad(), (outer() if outer else contextlib.nullcontext()):
                before = torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu")
                with pytest.raises(Exception, match="stopped"):
                    fn(x, out, True)
                assert (torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu")) == before
            written.append(out)
        assert torch.equal(written[0], written[1])
