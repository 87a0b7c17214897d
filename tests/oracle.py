"""The tests' oracle: eager autocast is the oracle.

The comparison itself (scripting with jitamp, calls 1, 2, 3 and 10, outputs,
dtypes, bitwise values, errors by type and message with TorchScript's known
rewordings, gradients, the thread's autocast state) lives in the library,
`jitamp.fuzz.oracle`, which the differential fuzzer (`python -m jitamp.fuzz`)
shares; read its docstring for the rules. This module re-exports it for the
tests and adds what only tests need (`run_program`).
"""
from __future__ import annotations

from typing import Any

from jitamp.fuzz.oracle import (  # noqa: F401  (re-exported for the tests)
    CALLS,
    ERROR_LINE,
    INTERPRETER_ERROR,
    TORCHSCRIPT_DEPRECATION,
    assert_same,
    assert_same_error,
    autocast_state,
    check_against_eager,
    clone_args,
    cpu_autocast,
    flatten,
    grad_leaves,
    no_grad_under,
    qualified_name,
    reset_autocast_state,
    run_side,
    save_without_jitamp,
    script,
    script_without_jitamp,
    torchscript_deprecation_ignored,
    unwrap_torchscript_error,
)


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
