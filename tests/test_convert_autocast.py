"""`jitamp convert IN OUT --autocast DEVICE:DTYPE`: mixed precision for a
saved model whose source has no autocast. The converted model, loaded with
torch.jit.load (after `import jitamp`) or jitamp.load, equals eager
`with torch.autocast(DEVICE, dtype=DTYPE): model(x)` on the original module.
"""
from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout

import pytest
import torch
from torch import nn

import jitamp
from jitamp.cli import main
from oracle import (check_against_eager, cpu_autocast, save_without_jitamp, script_without_jitamp,
                    torchscript_deprecation_ignored)


class Plain(nn.Module):
    """No autocast anywhere: Linear, GELU, LayerNorm, softmax, a matmul."""

    def __init__(self):
        super().__init__()
        self.inner = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.LayerNorm(16))
        self.out = nn.Linear(16, 8)

    def forward(self, x):
        h = self.inner(x)
        s = torch.softmax(h @ h.t(), dim=-1)
        return self.out(s @ h) + x


class WithDisabledRegion(nn.Module):
    """A scope of its own (autocast off), which stays nested inside."""

    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8)

    def forward(self, x):
        y = self.l(x)
        with torch.autocast("cpu", enabled=False):
            z = torch.mm(y.float(), y.float().t())
        return z, y


class TwoMethods(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(8, 8)
        self.dec = nn.Linear(8, 8)

    @torch.jit.export
    def encode(self, x):
        return torch.relu(self.enc(x))

    def forward(self, x):
        return self.dec(self.encode(x)), torch.mm(x, x.t())


def cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(list(args))
    return status, out.getvalue(), err.getvalue()


def convert(tmp_path, model: nn.Module, *flags: str) -> str:
    plain, out = str(tmp_path / "plain.pt"), str(tmp_path / "amp.pt")
    save_without_jitamp(model, plain)
    status, stdout, stderr = cli("convert", plain, out, *flags)
    assert status == 0, stderr
    assert f"wrote {out}" in stdout
    return out


def under_autocast(device: str, dtype: torch.dtype, method):
    """The eager reference: the original module's call inside the autocast."""
    def call(*args):
        with torch.autocast(device, dtype=dtype):
            return method(*args)
    return call


LOADERS = {"torch.jit.load": torch.jit.load, "jitamp.load": jitamp.load}
OUTERS = {"plain": None, "outer_fp16": cpu_autocast(torch.float16), "outer_disabled": cpu_autocast(enabled=False)}


@pytest.mark.parametrize("outer", list(OUTERS))
@pytest.mark.parametrize("loader", list(LOADERS))
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bfloat16", "float16"])
@pytest.mark.parametrize("model_cls", [Plain, WithDisabledRegion], ids=["plain", "disabled_region"])
def test_converted_model_equals_eager_autocast_around_the_call(tmp_path, model_cls, dtype, loader, outer):
    torch.manual_seed(0)
    model = model_cls()
    path = convert(tmp_path, model, "--autocast", f"cpu:{str(dtype).split('.')[1]}")
    x = torch.randn(4, 8)
    for grad in (False, True):  # inference, then training
        with torchscript_deprecation_ignored():
            loaded = LOADERS[loader](path)
        check_against_eager(under_autocast("cpu", dtype, model), [x], scripted=loaded,
                            outer=OUTERS[outer], grad=grad)


def test_methods_chooses_what_is_wrapped(tmp_path):
    torch.manual_seed(0)
    model = TwoMethods()
    path = convert(tmp_path, model, "--autocast", "cpu:bfloat16", "--methods", "forward,encode")
    x = torch.randn(4, 8)
    with torchscript_deprecation_ignored():
        loaded = torch.jit.load(path)
    check_against_eager(under_autocast("cpu", torch.bfloat16, model), [x], scripted=loaded)
    check_against_eager(under_autocast("cpu", torch.bfloat16, model.encode), [x], scripted=loaded.encode)


def test_only_the_chosen_method_is_wrapped(tmp_path):
    torch.manual_seed(0)
    model = TwoMethods()
    path = convert(tmp_path, model, "--autocast", "cpu:bfloat16", "--methods", "encode")
    x = torch.randn(4, 8)
    with torchscript_deprecation_ignored():
        loaded = torch.jit.load(path)

    def eager_forward(x):  # encode under autocast, the rest not
        with torch.autocast("cpu", dtype=torch.bfloat16):
            e = model.encode(x)
        return model.dec(e), torch.mm(x, x.t())

    check_against_eager(eager_forward, [x], scripted=loaded)
    check_against_eager(under_autocast("cpu", torch.bfloat16, model.encode), [x], scripted=loaded.encode)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="cuda:DTYPE needs a CUDA device to compare with eager")
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_cuda_converted_model_equals_eager(tmp_path, dtype):
    torch.manual_seed(0)
    model = Plain().cuda()
    path = convert(tmp_path, model, "--autocast", f"cuda:{str(dtype).split('.')[1]}")
    x = torch.randn(4, 8, device="cuda")
    for grad in (False, True):
        with torchscript_deprecation_ignored():
            loaded = torch.jit.load(path)
        check_against_eager(under_autocast("cuda", dtype, model), [x], scripted=loaded, grad=grad)


@pytest.mark.parametrize("flags, message", [
    (["--autocast", "cpu:bf16"], "bad --autocast 'cpu:bf16': expected DEVICE:DTYPE"),
    (["--autocast", "tpu:bfloat16"], "bad --autocast 'tpu:bfloat16'"),
    (["--autocast", "cpu"], "bad --autocast 'cpu'"),
    (["--autocast", "cpu:float32"], "DTYPE one of bfloat16, float16"),
    (["--autocast", "cpu:bfloat16", "--methods", "forward,decode"], "has no method decode (it has: encode, forward)"),
    (["--autocast", "cpu:bfloat16", "--methods", "forward,"], "bad --methods 'forward,'"),
    (["--methods", "forward"], "--methods chooses the methods --autocast wraps"),
])
def test_bad_flags_are_one_line_errors(tmp_path, flags, message):
    plain, out = str(tmp_path / "plain.pt"), str(tmp_path / "amp.pt")
    save_without_jitamp(TwoMethods(), plain)
    status, stdout, stderr = cli("convert", plain, out, *flags)
    assert status != 0
    assert message in stderr
    assert stderr.count("\n") == 1, stderr
    assert not (tmp_path / "amp.pt").exists()


def test_add_autocast_refuses_a_module_that_has_run():
    torch.manual_seed(0)
    with torchscript_deprecation_ignored():
        scripted = torch.jit.script(Plain())
    scripted(torch.randn(4, 8))
    with pytest.raises(RuntimeError, match="it has already run"):
        jitamp.add_autocast(scripted, "cpu", torch.bfloat16)


@pytest.mark.parametrize("args, error", [
    (("tpu", torch.bfloat16), "device_type is a device type with autocast"),
    (("meta", torch.bfloat16), "device_type is a device type with autocast"),
    (("cpu", torch.float32), "dtype is torch.bfloat16 or torch.float16"),
])
def test_add_autocast_bad_arguments(args, error):
    with torchscript_deprecation_ignored():
        scripted = torch.jit.script(Plain())
    with pytest.raises(ValueError, match=error):
        jitamp.add_autocast(scripted, *args)


class ReturnInNestedScopes(nn.Module):
    """Scripted without jitamp, the return inside two `with` blocks leaves
    `v` used outside the If that defines it (TorchScript's exit transform):
    its interpreter runs that graph, a copy of it did not (fuzz finding 24,
    repair_value_scopes.h)."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(4, 4))

    def forward(self, x: torch.Tensor):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                if bool(x.sum() > 0):
                    return torch.mm(self.w, x), x
            v = torch.mm(x, x)
        return v, x * 2


def test_add_autocast_of_a_graph_with_a_value_used_outside_its_block():
    model = ReturnInNestedScopes()
    plain = script_without_jitamp(model)
    with pytest.raises(RuntimeError, match="not in scope"):  # the case is live
        plain.graph.copy()
    jitamp.add_autocast(plain, "cpu", torch.float16)
    torch._C._jit_pass_lint(plain.graph)

    def eager(x):
        with torch.autocast("cpu", dtype=torch.float16):
            return model(x)

    for x in (torch.ones(4, 4), -torch.ones(4, 4)):  # both ways out
        check_against_eager(eager, [x], scripted=plain)
