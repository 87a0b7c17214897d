"""Deployment from C++: a model scripted with jitamp and saved in Python runs
in a C++ program built against the installed LibTorch with jitamp's op
library and no Python (cpp/: jitamp_ops, jitamp_run), and gives the outputs
Python gives, bit for bit (the same kernels run in both processes), which are
eager's.

Builds cpp/ with CMake once per test module (about 30 s on two cores).
Skipped only where CMake or a C++ compiler is missing.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import jitamp
import oracle

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CPP_DIR = os.path.join(REPO, "cpp")
ROWS, COLS = 5, 16
CALLS = 3

# c10::ScalarType names, as jitamp_run prints them.
DTYPES = {"Float": torch.float32, "BFloat16": torch.bfloat16, "Half": torch.float16}


class DeployModel(nn.Module):
    """A bfloat16 autocast region (Linear, GELU, LayerNorm) with an
    autocast-disabled region nested in it, and a Linear outside both, which
    autocast casts only under the caller's region: the output is float32
    without one and bfloat16 with one."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(COLS, 32)
        self.norm = nn.LayerNorm(32)
        self.fc2 = nn.Linear(32, 32)
        self.head = nn.Linear(32, 8)
        self.skip = nn.Linear(COLS, 8)

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            h = self.norm(F.gelu(self.fc1(x)))
            with torch.autocast("cpu", enabled=False):
                r = self.fc2(h.float())
            y = self.head(h + r)
        return y + self.skip(x)


def _compiler() -> str | None:
    for name in (os.environ.get("CXX"), "c++", "g++", "clang++"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


@pytest.fixture(scope="module")
def jitamp_run(tmp_path_factory) -> str:
    """Configures and builds cpp/; returns the path of the jitamp_run program."""
    cmake = shutil.which("cmake")
    if cmake is None:
        pytest.skip("cmake is not installed: cannot build the C++ deployment program")
    cxx = _compiler()
    if cxx is None:
        pytest.skip("no C++ compiler ($CXX, c++, g++ or clang++): "
                    "cannot build the C++ deployment program")
    build = tmp_path_factory.mktemp("cpp_build")
    configure = [cmake, "-S", CPP_DIR, "-B", str(build),
                 f"-DCMAKE_PREFIX_PATH={torch.utils.cmake_prefix_path}",
                 f"-DCMAKE_CXX_COMPILER={cxx}", "-DCMAKE_BUILD_TYPE=Release"]
    if shutil.which("ninja"):
        configure += ["-G", "Ninja"]
    compile_ = [cmake, "--build", str(build), "--parallel", str(os.cpu_count() or 2)]
    start = time.monotonic()
    for command in (configure, compile_):
        done = subprocess.run(command, capture_output=True, text=True)
        assert done.returncode == 0, (
            f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    print(f"\nbuilt cpp/ in {time.monotonic() - start:.1f} s", file=sys.stderr)
    exe = build / "jitamp_run"
    assert exe.is_file(), f"the build made no {exe}"
    return str(exe)


@pytest.fixture(scope="module")
def saved_model(tmp_path_factory):
    """(the eager module, the path of its jitamp-scripted version saved)."""
    torch.manual_seed(0)
    model = DeployModel().eval()
    path = tmp_path_factory.mktemp("cpp_model") / "model.pt"
    torch.jit.save(oracle.script(model), str(path))
    return model, str(path)


@contextlib.contextmanager
def _jitamp_enabled():
    """jitamp.enable() for the block (as oracle.script does), leaving it
    enabled after if it was before."""
    was_enabled = jitamp.is_enabled()
    jitamp.enable()
    try:
        yield
    finally:
        if not was_enabled:
            jitamp.disable()


def _raw(t: torch.Tensor) -> bytes:
    """The bytes of a tensor in host (here little-endian) order."""
    return bytes(t.contiguous().view(torch.uint8).flatten().tolist())


def _run_cpp(exe: str, model_path: str, x: torch.Tensor, tmp_path, flags) -> tuple:
    """Runs jitamp_run; returns (its output as float32, the output's dtype)."""
    assert x.dtype == torch.float32 and x.dim() == 2 and sys.byteorder == "little"
    inp, out = tmp_path / "input.bin", tmp_path / "output.bin"
    inp.write_bytes(_raw(x))
    command = [exe, *flags, "--calls", str(CALLS), model_path, str(inp),
               str(x.shape[0]), str(x.shape[1]), str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (
        f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    fields = dict(line.split(" ", 1) for line in done.stdout.strip().splitlines())
    assert fields.get("dtype") in DTYPES, done.stdout
    shape = [int(size) for size in fields["shape"].split()]
    values = torch.frombuffer(bytearray(out.read_bytes()), dtype=torch.float32).reshape(shape)
    return values, DTYPES[fields["dtype"]]


@pytest.mark.parametrize("grad", [True, False], ids=["grad", "no_grad"])
@pytest.mark.parametrize("outer_autocast", [False, True], ids=["no_outer", "outer_bf16"])
def test_cpp_matches_python(jitamp_run, saved_model, tmp_path, outer_autocast, grad):
    model, model_path = saved_model
    x = torch.randn(ROWS, COLS, generator=torch.Generator().manual_seed(1))
    outer = oracle.cpu_autocast(torch.bfloat16) if outer_autocast else None

    # Python, as jitamp documents it for a saved model: load, then
    # jitamp.rewrite (the executor it picks is not saved), with jitamp
    # enabled (TorchScript's own autocast pass off). Against eager, the
    # oracle, call after call; then the output to compare C++ with.
    with _jitamp_enabled(), torch.set_grad_enabled(grad):
        loaded = jitamp.rewrite(torch.jit.load(model_path))
        assert "ops.jitamp.autocast_enter" in loaded.code, loaded.code
        oracle.check_against_eager(model, [x], scripted=loaded, outer=outer,
                                   calls=tuple(range(1, CALLS + 1)))
        with outer() if outer else contextlib.nullcontext():
            expected = loaded(x).detach()
    assert expected.dtype == (torch.bfloat16 if outer_autocast else torch.float32)

    flags = (["--autocast"] if outer_autocast else []) + ([] if grad else ["--no-grad"])
    values, dtype = _run_cpp(jitamp_run, model_path, x, tmp_path, flags)
    assert dtype == expected.dtype, f"C++ returned {dtype}, Python {expected.dtype}"
    want = expected.float()  # exact: float32 holds every bfloat16
    assert values.shape == want.shape, f"C++ shape {values.shape}, Python {want.shape}"
    assert torch.equal(values.view(torch.int32), want.view(torch.int32)), (
        f"C++ and Python outputs differ (max abs diff {(values - want).abs().max()})")


def test_cpp_reports_bad_arguments(jitamp_run, tmp_path):
    done = subprocess.run([jitamp_run, "model.pt"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "usage: jitamp_run" in done.stderr, done.stderr
    inp = tmp_path / "input.bin"
    inp.write_bytes(_raw(torch.zeros(2, 3)))
    done = subprocess.run([jitamp_run, str(tmp_path / "missing.pt"), str(inp), "2", "4",
                           str(tmp_path / "out.bin")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "has 24 bytes, expected 32" in done.stderr, done.stderr
    done = subprocess.run([jitamp_run, str(tmp_path / "missing.pt"), str(inp), "2", "3",
                           str(tmp_path / "out.bin")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "cannot load model" in done.stderr, done.stderr
