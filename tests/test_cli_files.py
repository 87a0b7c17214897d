"""The files the command line reads: a user's example inputs never run code
while they load (torch.load with weights_only=True, on every supported
torch), and every bad file (missing, empty, truncated, not a zip archive,
inputs that are not tensors) is one clear line and exit status 2."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
import torch
from torch import Tensor, nn

from oracle import script_without_jitamp, torchscript_deprecation_ignored

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return self.fc(x)


# TorchScript's deprecation, which torch 2.14+ prints on every load (a
# FutureWarning; filtered in tests, never in the library)
TORCHSCRIPT_DEPRECATION = "ignore:`torch.jit.:FutureWarning"


def _jitamp(*args: str, cwd: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-W", TORCHSCRIPT_DEPRECATION, "-m", "jitamp", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def _one_clear_line(done: subprocess.CompletedProcess, message: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert message in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr


@pytest.fixture
def model(tmp_path) -> str:
    with torchscript_deprecation_ignored():
        torch.jit.save(script_without_jitamp(Net().eval()), str(tmp_path / "model.pt"))
    torch.save((torch.randn(2, 4),), str(tmp_path / "args.pt"))
    return str(tmp_path / "model.pt")


class RunsCode:
    """A pickle whose load would call os.system (a file from someone else)."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_example_inputs_that_would_run_code_are_refused(model, tmp_path):
    marker = tmp_path / "ran"
    torch.save((torch.randn(2, 4), RunsCode(str(marker))), str(tmp_path / "evil.pt"))
    done = _jitamp("export", "model.pt", "evil.pt", "out.pt2", cwd=str(tmp_path))
    _one_clear_line(done, "refusing evil.pt: it holds more than tensors")
    assert "system" in done.stderr  # what it would have called
    assert not marker.exists(), "loading the example inputs ran the file's code"
    assert not (tmp_path / "out.pt2").exists()


@pytest.mark.parametrize("held", ["a string", {"x": "a dict of strings"}, [torch.ones(1), "x"]],
                         ids=["string", "dict", "list_with_a_string"])
def test_example_inputs_that_are_not_tensors_are_named(model, tmp_path, held):
    torch.save(held, str(tmp_path / "inputs.pt"))
    done = _jitamp("export", "model.pt", "inputs.pt", "out.pt2", cwd=str(tmp_path))
    _one_clear_line(done, "inputs.pt holds str among its example inputs: expected tensors")


def _bad_model(kind: str, directory) -> str:
    path = os.path.join(directory, f"{kind}.pt")
    if kind == "missing":
        return path
    if kind == "empty":
        open(path, "wb").close()
    elif kind == "truncated":
        with open(os.path.join(directory, "model.pt"), "rb") as whole:
            data = whole.read()
        with open(path, "wb") as half:
            half.write(data[: len(data) // 2])
    elif kind == "not_a_zip":
        with open(path, "w") as text:
            text.write("def forward(x):\n    return x\n")
    return path


@pytest.mark.parametrize("kind", ["missing", "empty", "truncated", "not_a_zip"])
@pytest.mark.parametrize("command", ["convert", "export", "dump"])
def test_a_bad_model_file_is_one_clear_line(model, tmp_path, command, kind):
    path = os.path.basename(_bad_model(kind, str(tmp_path)))
    args = {"convert": ("convert", path, "out.pt"), "export": ("export", path, "args.pt", "out.pt2"),
            "dump": ("dump", path)}[command]
    done = _jitamp(*args, cwd=str(tmp_path))
    _one_clear_line(done, f"no such file: {path}" if kind == "missing" else f"cannot load {path}")
    assert not any(name.startswith(("out", ".out")) for name in os.listdir(tmp_path))


def _calls(source: str, name: str) -> list[str]:
    """The text of each call `name(...)` in `source` (parentheses matched)."""
    calls = []
    for found in re.finditer(re.escape(name) + r"\(", source):
        depth, end = 0, found.end() - 1
        for end in range(found.end() - 1, len(source)):
            depth += {"(": 1, ")": -1}.get(source[end], 0)
            if depth == 0:
                break
        calls.append(source[found.start():end + 1])
    return calls


def test_every_torch_load_in_the_tree_loads_weights_only():
    """`torch.load` unpickles arbitrary objects unless weights_only=True
    (the default only from torch 2.6; jitamp supports 2.4 on): every call
    in the repository's Python passes it, scripts and tests included."""
    files = sorted(os.path.relpath(os.path.join(root, name), REPO)
                   for folder in ("python", "scripts", "benchmarks", "tools", "tests")
                   for root, _, names in os.walk(os.path.join(REPO, folder))
                   for name in names if name.endswith(".py"))
    files.append("setup.py")
    assert "python/jitamp/cli.py" in files
    missing = []
    for name in files:
        if name == "tests/test_cli_files.py":
            continue  # this test's own pattern
        with open(os.path.join(REPO, name)) as f:
            source = f.read()
        missing += [f"{name}: {call}" for call in _calls(source, "torch.load") if "weights_only=True" not in call]
    assert missing == []


@pytest.mark.parametrize("command", ["convert", "export"])
def test_an_output_in_a_missing_folder_is_one_clear_line(model, tmp_path, command):
    args = ("convert", "model.pt", "nowhere/out.pt") if command == "convert" else (
        "export", "model.pt", "args.pt", "nowhere/out.pt2")
    _one_clear_line(_jitamp(*args, cwd=str(tmp_path)), "cannot save nowhere/")
    assert sorted(os.listdir(tmp_path)) == ["args.pt", "model.pt"]
