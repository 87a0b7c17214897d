"""A small lit: runs the `# RUN:` lines of a tests/graphs case.

A case file is Python source with lines like

    # RUN: jitamp dump %s:fn | filecheck %s
    # RUN: jitamp dump %s:fn --inline | filecheck %s --check-prefix INLINED

or TorchScript IR text (FILE.ir, `#` starting comments) that one pass runs on:

    # RUN: jitamp opt %s --passes=remove_kernel_casts | filecheck %s

`%s` is the case file. The `jitamp ...` part runs in-process (jitamp.cli),
its output is piped to the `filecheck` package (LLVM FileCheck's directives:
CHECK, CHECK-LABEL, CHECK-NEXT, CHECK-NOT, CHECK-DAG, captures).

Implicit check-not (for `jitamp dump`, whose input is source; an IR case
shows its input). Each pattern in IMPLICIT_CHECK_NOT may appear in a RUN's
dump only on lines that the RUN's positive checks (PREFIX:, -NEXT, -DAG,
-LABEL, -COUNT-n) name: the dump must hold exactly as many lines with it as
those check lines (n for -COUNT-n). This stands in for LLVM FileCheck's
`--implicit-check-not`, which the filecheck package lacks. So a case says
nothing about `jitamp::autocast_caller_region` when its graph casts only
inside scopes, and a case that expects one (a cast outside any scope, an
inlined callee's) opts out for exactly that node by checking it.
"""
from __future__ import annotations

import contextlib
import io
import os
import re
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


# A caller-region node exists only where a graph casts outside any scope.
IMPLICIT_CHECK_NOT = ("jitamp::autocast_caller_region",)


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


def check_prefixes(filecheck_args: list[str]) -> list[str]:
    prefixes = []
    args = iter(filecheck_args)
    for arg in args:
        name, eq, value = arg.partition("=")
        if name in ("--check-prefix", "--check-prefixes"):
            prefixes.extend((value if eq else next(args, "")).split(","))
    return prefixes or ["CHECK"]


def positive_check_count(path: str, prefixes: list[str], pattern: str) -> int:
    """How many dump lines the positive checks of `prefixes` that name
    `pattern` match."""
    directive = re.compile(
        rf"\b(?:{'|'.join(map(re.escape, prefixes))})(?:-NEXT|-DAG|-LABEL|-COUNT-(\d+))?(?:{{LITERAL}})?:(.*)$")
    count = 0
    with open(path) as f:
        for line in f:
            match = directive.search(line)
            if match and pattern in match.group(2):
                count += int(match.group(1) or 1)
    return count


def check_implicit_not(path: str, filecheck_args: list[str], text: str) -> None:
    prefixes = check_prefixes(filecheck_args)
    for pattern in IMPLICIT_CHECK_NOT:
        in_dump = sum(pattern in line for line in text.splitlines())
        named = positive_check_count(path, prefixes, pattern)
        if in_dump != named:
            raise LitFailure(
                f"implicit check-not: the dump has {in_dump} line(s) with `{pattern}`, the "
                f"{','.join(prefixes)} checks name {named} (a dump may hold it only where a "
                f"positive check names it; see IMPLICIT_CHECK_NOT in tests/lit.py)\n--- dump ---\n{text}")


def run_case(path: str) -> int:
    """Runs every RUN line of the case; raises LitFailure. Returns the count."""
    runs = parse_run_lines(path)
    for run in runs:
        try:
            text = run_dump(run.dump_args)
            run_filecheck(run.filecheck_args, text)
            if run.dump_args[0] == "dump":
                check_implicit_not(path, run.filecheck_args, text)
        except LitFailure as failure:
            raise LitFailure(f"{path}:{run.line_number}: {failure}") from None
    return len(runs)
