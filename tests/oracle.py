"""The tests' oracle: eager autocast is the oracle.

The comparison itself (scripting with jitamp, calls 1, 2, 3 and 10, outputs,
dtypes, bitwise values, errors by type and message with TorchScript's known
rewordings, gradients, the thread's autocast state) is the library's public
`jitamp.testing`, which the differential fuzzer (tools/jitamp_fuzz) shares;
read its docstring for the rules. This module re-exports it for the tests
and adds what only tests need (`run_program`, `NO_EXPORT_REGIONS`).
"""
from __future__ import annotations

from typing import Any

from jitamp.testing import *  # noqa: F401,F403  (re-exported for the tests)


def _no_export_regions() -> str | None:
    try:
        from torch._higher_order_ops.wrap import wrap_with_autocast  # noqa: F401
    except ImportError:
        import torch

        return f"torch {torch.__version__} has no torch.export autocast regions, which jitamp.export needs"
    return None


# Why jitamp.export cannot run on this torch (a skip's reason), or None
# (tests/test_export.py::test_older_torch_gets_a_clear_error checks its error).
NO_EXPORT_REGIONS = _no_export_regions()


def run_program(directory: Any, source: str) -> Any:
    """Runs `source` as a Python program in a fresh process (a file: TorchScript
    reads the source), with tests/ importable; returns the CompletedProcess."""
    import os
    import subprocess
    import sys

    tests = os.path.dirname(os.path.abspath(__file__))
    program = os.path.join(str(directory), "program.py")
    with open(program, "w") as f:
        f.write(source)
    env = dict(os.environ, PYTHONPATH=tests + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, program], capture_output=True, text=True, env=env,
                          cwd=os.path.dirname(tests), timeout=300)
