"""`jitamp convert/dump --import MODULE / --library PATH`: models that call
other libraries' ops (issue 10, item 3)."""
import os
import subprocess
import sys

import torch

from oracle import check_against_eager, cpu_autocast, torchscript_deprecation_ignored

INPUTS = os.path.join(os.path.dirname(__file__), "cli_inputs")


def _jitamp(*args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([INPUTS, os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "jitamp", *args], capture_output=True,
                          text=True, timeout=300, env=env)


class UsesExtraOp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l = torch.nn.Linear(4, 4)

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = self.l(x)
        return torch.ops.jitamp_test_extra.twice(y)


def test_convert_names_the_missing_op_and_the_options(tmp_path):
    sys.path.insert(0, INPUTS)
    import extra_ops  # noqa: F401  (registers jitamp_test_extra::twice here)

    plain = str(tmp_path / "plain.pt")
    with torchscript_deprecation_ignored():
        torch.jit.save(torch.jit.script(UsesExtraOp()), plain)
    done = _jitamp("convert", plain, str(tmp_path / "out.pt"))
    assert done.returncode == 2
    assert "jitamp_test_extra::twice" in done.stderr and "--import" in done.stderr, done.stderr
    # One line of jitamp's, no traceback (torch may warn on stderr too: a
    # venv without numpy gets "Failed to initialize NumPy").
    ours = [line for line in done.stderr.splitlines() if line.startswith("jitamp:")]
    assert len(ours) == 1 and "--library" in ours[0], done.stderr
    assert "Traceback" not in done.stderr, done.stderr

    done = _jitamp("convert", plain, str(tmp_path / "out.pt"), "--import", "extra_ops")
    assert done.returncode == 0, done.stderr
    done = _jitamp("dump", plain, "--import", "extra_ops")
    assert done.returncode == 0 and "jitamp::autocast_enter" in done.stdout, done.stderr

    torch.manual_seed(0)
    model = UsesExtraOp()
    with torchscript_deprecation_ignored():
        torch.jit.save(torch.jit.script(model), plain)
    assert _jitamp("convert", plain, str(tmp_path / "out.pt"), "--import", "extra_ops").returncode == 0
    with torchscript_deprecation_ignored():
        loaded = torch.jit.load(str(tmp_path / "out.pt"))
    check_against_eager(model, [torch.randn(2, 4)], scripted=loaded)
    check_against_eager(model, [torch.randn(2, 4)], scripted=torch.jit.load(str(tmp_path / "out.pt")),
                        outer=cpu_autocast(torch.float16))


def test_bad_import_and_library_are_one_line_errors(tmp_path):
    done = _jitamp("table", "--import", "no_such_module_here")
    assert done.returncode == 2 and "--import no_such_module_here failed" in done.stderr, done.stderr
    done = _jitamp("table", "--library", str(tmp_path / "missing.so"))
    assert done.returncode == 2 and "--library" in done.stderr, done.stderr


def test_version_and_table():
    done = _jitamp("--version")
    assert done.returncode == 0 and torch.__version__ in done.stdout, done.stderr
    done = _jitamp("table")
    assert done.returncode == 0, done.stderr
    assert "aten::mm " in done.stdout or "aten::mm\t" in done.stdout or "\naten::mm" in done.stdout, done.stdout
    assert "ops this torch autocasts that the table lacks" in done.stdout
