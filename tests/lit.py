"""A small lit: runs the `# RUN:` lines of a tests/graphs case.

A case file is Python source with lines like

    # RUN: jitamp dump %s:fn | filecheck %s
    # RUN: jitamp dump %s:fn --inline | filecheck %s --check-prefix INLINED

`%s` is the case file. The `jitamp ...` part runs in-process (jitamp.cli),
its output is piped to the `filecheck` package (LLVM FileCheck's directives:
CHECK, CHECK-LABEL, CHECK-NEXT, CHECK-NOT, CHECK-DAG, captures).
"""
from __future__ import annotations

import contextlib
import io
import os
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass

from jitamp.cli import main as jitamp_main


@dataclass
class RunLine:
    line_number: int
    dump_args: list[str]
    filecheck_args: list[str]


class LitFailure(Exception):
    pass


def parse_run_lines(path: str) -> list[RunLine]:
    runs = []
    with open(path) as f:
        for number, line in enumerate(f, start=1):
            stripped = line.strip()
            if not stripped.startswith("# RUN:"):
                continue
            command = stripped[len("# RUN:"):].strip().replace("%s", path)
            left, bar, right = command.partition("|")
            dump = shlex.split(left)
            check = shlex.split(right)
            if not bar or not dump or dump[0] != "jitamp" or not check or check[0] != "filecheck":
                raise LitFailure(f"{path}:{number}: RUN must be `jitamp ... | filecheck ...`, got: {command}")
            runs.append(RunLine(number, dump[1:], check[1:]))
    if not runs:
        raise LitFailure(f"{path}: no `# RUN:` line")
    return runs


def run_dump(args: list[str]) -> str:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = jitamp_main(args)
    if status != 0:
        raise LitFailure(f"`jitamp {' '.join(args)}` exited {status}: {err.getvalue().strip()}")
    return out.getvalue()


def run_filecheck(args: list[str], text: str) -> None:
    with tempfile.NamedTemporaryFile("w", suffix=".ir", delete=False) as f:
        f.write(text)
        dump_path = f.name
    try:
        result = subprocess.run(
            [sys.executable, "-m", "filecheck", *args, "--input-file", dump_path],
            capture_output=True,
            text=True,
        )
    finally:
        os.unlink(dump_path)
    if result.returncode != 0:
        raise LitFailure(
            f"filecheck {' '.join(args)} failed:\n{result.stdout}{result.stderr}\n--- dump ---\n{text}"
        )


def run_case(path: str) -> int:
    """Runs every RUN line of the case; raises LitFailure. Returns the count."""
    runs = parse_run_lines(path)
    for run in runs:
        try:
            text = run_dump(run.dump_args)
            run_filecheck(run.filecheck_args, text)
        except LitFailure as failure:
            raise LitFailure(f"{path}:{run.line_number}: {failure}") from None
    return len(runs)
