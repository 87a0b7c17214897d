"""Shrinks a failing program to a small one that fails the same way.

Greedy delta debugging over the program tree: remove whole definitions,
statements and blocks, unwrap blocks (a `with`/`if`/loop replaced by its
body), neutralize assignments (`v = expr` becomes `v = <first input>`, so
later uses still type-check), simplify the return and the harness (no
gradients, no eager region, no flag alternation, no save). A candidate is
kept when it still fails with the same kind (`Result.kind`, e.g.
"mismatch:dtype"); a candidate that no longer scripts, or fails otherwise, is
dropped. Passes repeat until none makes progress or the budget runs out.
"""
from __future__ import annotations

import copy
import time
from typing import Callable, Iterator

from .generator import Block, Line, Program


def _lists(program: Program) -> Iterator[list]:
    """Every statement list of the program (bodies of defs and blocks)."""
    def walk(nodes):
        yield nodes
        for node in nodes:
            if isinstance(node, Block):
                yield from walk(node.body)
                if node.orelse is not None:
                    yield from walk(node.orelse)
    for d in program.defs:
        yield from walk(d.body)


def _first_input(program: Program, target: list) -> str:
    for d in program.defs:
        for nodes in _lists_of(d.body):
            if nodes is target:
                return "x0" if d.name == "prog" else "a"
    return "x0"


def _lists_of(nodes):
    yield nodes
    for node in nodes:
        if isinstance(node, Block):
            yield from _lists_of(node.body)
            if node.orelse is not None:
                yield from _lists_of(node.orelse)


def _candidates(program: Program) -> Iterator[Program]:
    # 1. whole definitions (never the entry point)
    for i, d in enumerate(program.defs):
        if d.name != "prog":
            c = copy.deepcopy(program)
            del c.defs[i]
            yield c
    # 2. statements and blocks, and unwrapping blocks
    n_lists = sum(1 for _ in _lists(program))
    for li in range(n_lists):
        nodes = list(_lists(program))[li]
        for i in reversed(range(len(nodes))):
            node = nodes[i]
            if isinstance(node, Line) and node.text.startswith("sink: List"):
                continue
            c = copy.deepcopy(program)
            target = list(_lists(c))[li]
            del target[i]
            yield c
            if isinstance(node, Block):
                for branch in ([node.body] + ([node.orelse] if node.orelse is not None else [])):
                    c = copy.deepcopy(program)
                    target = list(_lists(c))[li]
                    target[i:i + 1] = copy.deepcopy(branch)
                    yield c
    # 3. neutralize assignments
    for li in range(n_lists):
        nodes = list(_lists(program))[li]
        for i, node in enumerate(nodes):
            if isinstance(node, Line) and node.defines and not node.fixed and "=" in node.text:
                c = copy.deepcopy(program)
                target = list(_lists(c))[li]
                first = _first_input(c, target)
                if target[i].text == f"{node.defines} = {first}":
                    continue
                target[i] = Line(f"{node.defines} = {first}", defines=node.defines, fixed=True)
                yield c
    # 4. the return and the harness
    prog = next(d for d in program.defs if d.name == "prog")
    ret = prog.tail[0]
    simple = ret[:len(ret) - len(ret.lstrip())] + "return (" + ", ".join(
        ["x0"] * (ret.count(",")) + ["sink"]) + ")"
    if ret != simple:
        c = copy.deepcopy(program)
        next(d for d in c.defs if d.name == "prog").tail[0] = simple
        yield c
    for key, value in (("GRAD", False), ("OUTER", None), ("ALTERNATE", False), ("SAVE", False)):
        if program.harness[key] != value:
            c = copy.deepcopy(program)
            c.harness[key] = value
            yield c


def shrink(program: Program, still_fails: Callable[[Program], bool], *,
           budget_s: float = 120.0, max_tries: int = 2000) -> tuple[Program, int]:
    """The smallest program found for which `still_fails` holds; also the
    number of candidates tried."""
    deadline = time.monotonic() + budget_s
    tries = 0
    progress = True
    while progress and time.monotonic() < deadline and tries < max_tries:
        progress = False
        for cand in _candidates(program):
            if time.monotonic() >= deadline or tries >= max_tries:
                break
            tries += 1
            if still_fails(cand):
                program = cand
                progress = True
                break  # restart from the smaller program
    return program, tries


def shrink_failure(program: Program, kind: str, directory: str, *, budget_s: float = 120.0,
                   run=None) -> tuple[Program, int]:
    """Shrinks `program`, keeping the failure kind `kind`."""
    if run is None:
        from .runner import run_source as run

    def still_fails(cand: Program) -> bool:
        return run(cand.render(), directory).kind == kind

    return shrink(program, still_fails, budget_s=budget_s)
