"""Loops that TorchScript's interpreter would emit inline (fuzz finding 6).

The interpreter emits a node whose one output has one use at that use, a
prim::Loop with one loop-carried value included, and moves a value out of
its register at the use it emits last: emitting a loop inline after the
reads of the node that uses its result makes a read inside the loop the
last, so the loop's second iteration reads None ("Expected Tensor but got
None"). Plain TorchScript fails so wherever its optimizer leaves the loop
rolled (a trip count known only at run time); jitamp's simple executor,
which did not unroll then, met it with constant trip counts too. jitamp's
KeepLoopsOutOfLine (csrc/jit_autocast/repairs/keep_loops_out_of_line.h) gives such
loops two more carried values, so they run as eager does in every plan;
the simple executor's plan, which unrolls loops, trades them for
`jitamp::keep_out_of_line()` after the loop (KeepLoopsOutOfLineInPlan).

Each case the pass changes also shows that plain TorchScript fails on it,
so that the case covers the interpreter's bug and not a program that runs
anyway. Two ifs whose blocks read such a value outside any loop lose
nothing: the pass leaves them as they are (test_an_if_is_kept_out_of_line_
only_for_a_loop_in_it), and they run as eager.
"""
from typing import List, Tuple

import pytest
import torch
from torch import Tensor

import jitamp
import oracle
from oracle import check_against_eager
from scenario_helpers import OUTERS, WARNING_FILTERS, X, Y
from test_repairs import loop_in_an_if  # (the repair's own case)

pytestmark = WARNING_FILTERS


def constant_trip_counts(x0: Tensor, x1: Tensor) -> Tuple[Tensor, List[Tensor]]:
    # Fuzz finding 6, shrunk: the inner loop carries v3 (one output, used
    # by the outer body's return, which reads v6 first).
    sink: List[Tensor] = []
    v3 = x0
    v6 = x0
    for i in range(2):
        v6 = torch.prod(x0, 1, keepdim=True) + x0
        sink.append(v6)
        for j in range(2):
            sink.append(torch.trace(v6) + x1)
            v3 = x0
    return v6, sink


def run_time_trip_counts(x0: Tensor, x1: Tensor, n: int) -> Tuple[Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    v3 = x0
    v6 = x0
    for i in range(n):
        v6 = torch.mm(x0, x1) + x0
        for j in range(n):
            sink.append(torch.trace(v6) + x1)
            v3 = x0
    return v6, sink


def in_scope(x0: Tensor, x1: Tensor, n: int) -> Tuple[Tensor, List[Tensor]]:
    sink: List[Tensor] = []
    v3 = x0
    v6 = x0
    with torch.autocast("cpu", dtype=torch.bfloat16):
        for i in range(n):
            v6 = torch.mm(x0, x1)
            for j in range(2):
                sink.append(torch.mm(v6, x1))
                v3 = x0
    return v6, sink


def in_branch(x0: Tensor, flag: bool) -> Tuple[Tensor, Tensor]:
    # The node that reads v6 before the loop's result: the branch's return.
    v6 = x0
    v3 = x0
    if flag:
        v6 = x0 + 1
        for j in range(2):
            v3 = v6 * 2
    return v6, v3


def read_by_an_op(x0: Tensor) -> Tensor:
    v6 = x0
    for i in range(2):
        v6 = x0 + 1
        v3 = x0
        for j in range(2):
            v3 = v6 * 2
        v6 = torch.add(v6, v3)
    return v6


def accumulates(y: Tensor, n: int) -> Tensor:
    v = y
    for i in range(n):
        v = v * y
    return v


def calls_a_loop_that_reads_its_argument(x: Tensor, n: int) -> Tensor:
    # Once the callee is inlined, aten::add reads y, then the callee's loop
    # (its one output returned) reads y in every iteration.
    out = x
    for i in range(2):
        y = x + i
        out = torch.add(y, accumulates(y, n))
    return out


def if_reads_outside_a_loop(x0: Tensor, flag: bool) -> List[Tensor]:
    # loop_in_an_if without the loop: the inner if's block reads v3 once,
    # after the outer branch's return has loaded it; moved there, nothing
    # reads it again. No op is needed after the if.
    sink: List[Tensor] = []
    v3 = x0
    v10 = x0
    if not flag:
        v3 = torch.exp(v3)
        if not flag:
            v10 = torch.softmax(x0, -1) + v3
    sink.append(v3 * 2)
    sink.append(v10 * 2)
    return sink


def if_in_a_loop_reads_outside_a_loop(x0: Tensor, flag: bool, n: int) -> List[Tensor]:
    # The same in a loop, of a value made before it: add loads v3, then the
    # if, emitted inline, reads it; TorchScript keeps a value a loop reads
    # alive past the loop, so no iteration loses it.
    sink: List[Tensor] = []
    v3 = torch.exp(x0)
    for i in range(n):
        sink.append(torch.add(v3, (torch.softmax(x0, -1) + v3) if not flag else x0))
    return sink


def forks_the_loop(x0: Tensor, x1: Tensor, n: int) -> Tuple[Tensor, List[Tensor]]:
    future = torch.jit.fork(run_time_trip_counts, x0, x1, n)
    return torch.jit.wait(future)


CASES = {
    "constant_trip_counts": (constant_trip_counts, [X, Y]),
    "run_time_trip_counts": (run_time_trip_counts, [X, Y, 2]),
    "in_scope": (in_scope, [X, Y, 2]),
    "in_branch": (in_branch, [X, True]),
    "read_by_an_op": (read_by_an_op, [X]),
    "inlined_callee": (calls_a_loop_that_reads_its_argument, [X, 2]),
    "forked": (forks_the_loop, [X, Y, 2]),
    "loop_in_an_if": (loop_in_an_if, [X, False]),
    "if_reads_outside_a_loop": (if_reads_outside_a_loop, [X, False]),
    "if_in_a_loop_reads_outside_a_loop": (if_in_a_loop_reads_outside_a_loop, [X, False, 3]),
}


def _plain_torchscript_fails(fn, args, optimize: bool) -> bool:
    plain = oracle.script_without_jitamp(fn)
    try:
        with torch.jit.optimized_execution(optimize):
            for _ in range(3):
                plain(*args)
    except RuntimeError as error:
        assert "Expected Tensor but got None" in str(error) or "no tensor arguments" in str(error), error
        return True
    return False


@pytest.mark.parametrize("outer", ["no_outer", "outer_bf16"])
@pytest.mark.parametrize("case", list(CASES))
def test_runs_as_eager(case, outer):
    fn, args = CASES[case]
    check_against_eager(fn, args, outer=OUTERS[outer])


@pytest.mark.parametrize("case", list(CASES))
def test_runs_as_eager_on_the_profiling_executor(case):
    fn, args = CASES[case]
    check_against_eager(fn, args, scripted=oracle.script(fn, profiling_executor=True))


@pytest.mark.parametrize("case", sorted(set(CASES) - {"inlined_callee", "if_reads_outside_a_loop",
                                                     "if_in_a_loop_reads_outside_a_loop"}))
def test_plain_torchscript_loses_the_value(case):
    """Without jitamp, the unoptimized plan fails on these cases; the
    optimized plan too where a trip count is known only at run time.

    (Not the inlined callee: plain TorchScript inlines only on the optimized
    plan, which unrolls the loop. jitamp's simple executor, which then kept
    the loop, failed on it with the pass's rule for returned results
    disabled.)"""
    fn, args = CASES[case]
    assert _plain_torchscript_fails(fn, args, optimize=False)
    if case in ("run_time_trip_counts", "forked"):
        assert _plain_torchscript_fails(fn, args, optimize=True)


@pytest.mark.parametrize("case, kept", [("loop_in_an_if", 1), ("if_reads_outside_a_loop", 0),
                                        ("if_in_a_loop_reads_outside_a_loop", 0)])
def test_an_if_is_kept_out_of_line_only_for_a_loop_in_it(case, kept):
    fn, args = CASES[case]
    scripted = oracle.script(fn)
    scripted(*args)
    plan = torch.jit.last_executed_optimized_graph()
    assert len(plan.findAllNodes("jitamp::keep_out_of_line")) == kept, plan
    assert not _plain_torchscript_fails(fn, args, optimize=False) or kept


def test_saved_and_loaded(tmp_path):
    class Model(torch.nn.Module):
        def forward(self, x0: Tensor, x1: Tensor, n: int) -> Tuple[Tensor, List[Tensor]]:
            return run_time_trip_counts(x0, x1, n)

    with jitamp.enable():
        scripted = torch.jit.script(Model())
    path = str(tmp_path / "m.pt")
    scripted.save(path)
    for loaded in (torch.jit.load(path), jitamp.load(path)):
        check_against_eager(Model(), [X, Y, 2], scripted=loaded)


def doubles(x: Tensor, n: int) -> Tensor:
    v = x
    for i in range(n):
        v = v * 2
    return v * 3


def test_loops_without_the_hazard_are_left_alone():
    graph = oracle.script(doubles).graph
    (loop,) = graph.findAllNodes("prim::Loop")
    assert len(list(loop.outputs())) == 1, graph
    graph = oracle.script(run_time_trip_counts).graph
    inner = [node for node in graph.findAllNodes("prim::Loop", recurse=True)
             if node.owningBlock() is not graph.block()]
    assert [len(list(node.outputs())) for node in inner] == [3], graph


def test_the_pass_is_idempotent():
    def keep_loops_out_of_line(graph):
        return jitamp.passes.run("keep_loops_out_of_line", graph)

    graph = oracle.script_without_jitamp(in_branch).graph
    assert keep_loops_out_of_line(graph)
    once = str(graph)
    assert not keep_loops_out_of_line(graph)
    assert str(graph) == once
    assert not keep_loops_out_of_line(oracle.script_without_jitamp(doubles).graph)
