"""The passes that repair TorchScript's own bugs (csrc/jit_autocast/repairs/).

For each repair: a test that shows the bug on plain TorchScript (scripted
with jitamp disabled, `oracle.script_without_jitamp`, or the torch API
itself: a graph copy, a save and load, torch.jit.freeze), asserting that
the running torch has it, and a test that jitamp's version of the same
program runs as eager (`oracle.check_against_eager`).

AFFECTED_VERSIONS records the torch versions known to have each bug, only
as the project's sources state them: the repairs' headers, docs/passes.md,
docs/facts.md, docs/lab-notes.md and the fuzz reproducers' headers in
tests/regressions/. The suite is tested on every minor torch from 2.4.1 to
2.15.0 (README, "Supported torch versions"), but none of those sources says
which of them has which bug, except where named below; MEASURED names
the versions these tests were run on. A plain-TorchScript test
here fails on a torch that does not have its bug, which is how a version
gets recorded as free of it; repair_frozen_call_stacks's is the exception
(its docstring says what it shows instead).

No repair is skipped by torch version: every bug is in every version
measured (MEASURED), the oldest and newest supported among them. A torch
found without one fails its plain-TorchScript test here, which is where a
version gate would start.
"""
import contextlib
import textwrap
from typing import List, Tuple

import pytest
import torch
from torch import Tensor, nn

import jitamp
import oracle
from oracle import check_against_eager, cpu_autocast, script, script_without_jitamp

# The versions this file's plain-TorchScript tests passed on (each shows
# its bug there): the oldest and newest supported torch and CI's, run with
# scripts/torch_matrix.sh's venvs on 2026-12-02. Every repair's bug is in
# all three, so no repair is skipped on any supported torch.
MEASURED = "2.4.1, 2.13.0 and 2.15.0 (this suite)"

AFFECTED_VERSIONS = {
    # tests/regressions/jitamp_add_autocast_value_used_outside_its_block.py
    # (fuzz seed 112702, index 124, found on torch 2.13)
    "repair_value_scopes": "2.13 (fuzz seed 112702, index 124); " + MEASURED,
    # tests/regressions/jitamp_saved_scope_exit_cut_by_a_raise.py
    # (fuzz seed 112903, index 40640, found on torch 2.13)
    "restore_exits_cut_by_raises": "2.13 (fuzz seed 112903, index 40640); " + MEASURED,
    # docs/facts.md, "TorchScript in torch 2.13 (verified)"; fuzz finding 6
    # (its reproducers name no version)
    "keep_loops_out_of_line": "2.13 (docs/facts.md); " + MEASURED,
    # docs/facts.md (the same fact, "and KeepIfsOutOfLine, for an if");
    # fuzz seed 1134, index 6768 names no version
    "keep_ifs_out_of_line": "2.13 (docs/facts.md); " + MEASURED,
    # repairs/repair_frozen_call_stacks.h and docs/passes.md: "every torch
    # jitamp supports"; docs/facts.md: plain TorchScript on 2.13 printed a
    # wrong frame name
    "repair_frozen_call_stacks": "every torch jitamp supports (repairs/repair_frozen_call_stacks.h, "
                                 "docs/passes.md); 2.13 (docs/facts.md); " + MEASURED + " (its precondition)",
}

REPAIRS = ("repair_value_scopes", "restore_exits_cut_by_raises", "keep_loops_out_of_line",
           "keep_ifs_out_of_line", "repair_frozen_call_stacks")

pytestmark = [
    # torch.jit.script/save/load/freeze: DeprecationWarning on 2.13,
    # FutureWarning from 2.14 (pyproject's filterwarnings has the same)
    pytest.mark.filterwarnings(r"ignore:`torch\.jit\.\w+` is deprecated:DeprecationWarning"),
    pytest.mark.filterwarnings(r"ignore:`torch\.jit\.\w+` is deprecated:FutureWarning"),
]

# The value the interpreter lost reads as None: an op that takes a Tensor
# says so, a dispatched op (trace) finds no tensor to dispatch on.
INTERPRETER_LOST_A_VALUE = "Expected Tensor but got None|There were no tensor arguments to this function"


def rand(*shape: int, seed: int) -> Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


X = rand(4, 4, seed=1)
Y = rand(4, 4, seed=2)


def test_every_repair_has_a_row():
    """One row per repair header (out_of_line is the shared helper of the
    two out-of-line passes, not a repair of its own)."""
    import pathlib
    repairs = pathlib.Path(__file__).resolve().parent.parent / "csrc" / "jit_autocast" / "repairs"
    headers = {p.stem for p in repairs.glob("*.h")} - {"out_of_line"}
    assert headers == set(REPAIRS) == set(AFFECTED_VERSIONS)
    assert all(row.strip() for row in AFFECTED_VERSIONS.values())


# --- repair_value_scopes ----------------------------------------------------


class ReturnInNestedWiths(nn.Module):
    """A `return` inside nested `with` blocks (the shape of
    tests/graphs/pass_repair_value_scopes.ir): scripted without jitamp, the
    front end's exit transform leaves `v`, defined in one prim::If, read by
    another."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(rand(4, 4, seed=3))

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            with torch.autocast("cpu", enabled=False):
                if bool(x.sum() > 0):
                    return torch.mm(x, self.w)
            v = torch.mm(x, self.w)
        return v + torch.mm(x, x)


def _positive_and_negative(i: int) -> List[Tensor]:
    """Both paths of ReturnInNestedWiths: the early return, then not."""
    x = X.abs()
    return [x if i % 2 else -x]


def test_repair_value_scopes_plain_torchscript_leaves_a_value_out_of_scope():
    """Plain torch.jit.script makes a graph that every graph copy refuses
    (and TorchScript's own lint): calling the scripted module fails too,
    since the graph the executors compile is a copy; eager runs."""
    model = ReturnInNestedWiths()
    plain = script_without_jitamp(model)
    with pytest.raises(RuntimeError, match=r"Graph::copy\(\) encountered a use of a value .* not in scope"):
        plain.graph.copy()
    with pytest.raises(RuntimeError, match="not in scope"):
        torch._C._jit_pass_lint(plain.graph)
    with pytest.raises(RuntimeError, match="not in scope"):
        plain(X.abs())
    model(X.abs())
    model(-X.abs())


def test_repair_value_scopes_jitamp_runs_it_as_eager():
    """jitamp.add_autocast of the same plain-scripted module (the path the
    fuzzer found it on) repairs the graph first: it copies, and runs as the
    eager module under `torch.autocast("cpu", dtype=torch.bfloat16)`, on
    both paths."""
    model = ReturnInNestedWiths()
    plain = script_without_jitamp(model)
    assert jitamp.add_autocast(plain, "cpu", torch.bfloat16)
    plain.graph.copy()
    torch._C._jit_pass_lint(plain.graph)
    check_against_eager(model, [X], scripted=plain, outer=cpu_autocast(),
                        args_for_call=_positive_and_negative)


# --- restore_exits_cut_by_raises --------------------------------------------


def test_restore_exits_cut_by_raises_plain_torchscript_drops_what_follows_a_raise_when_loading(tmp_path):
    """Compiling saved code, TorchScript drops what follows an unconditional
    raise. Plain TorchScript's front end never puts anything after a raise
    itself, so a plain program cannot lose behaviour by it; what can be
    shown is the loss: a plain scripted function (with an early return, as
    in the reproducer) given an op after its raise (where jitamp's
    rewrite puts a scope's autocast_exit) is saved with that op in its code,
    and loads without it."""
    def f(x: Tensor, out: Tensor, flag: bool) -> Tensor:
        if not flag:
            return x
        out.add_(1)
        raise ValueError("stopped")

    plain = script_without_jitamp(f)
    graph = plain.graph
    (raise_,) = graph.findAllNodes("prim::RaiseException", recurse=True)
    (add,) = graph.findAllNodes("aten::add_", recurse=True)
    graph.createClone(add, lambda value: value).insertAfter(raise_)
    torch._C._jit_pass_lint(graph)
    assert len(plain.graph.findAllNodes("aten::add_", recurse=True)) == 2
    code = plain.code
    assert code.index("torch.add_(out, 1)", code.index("ops.prim.RaiseException")) > 0, code
    path = str(tmp_path / "f.pt")
    plain.save(path)
    loaded = torch.jit.load(path)
    assert len(loaded.graph.findAllNodes("aten::add_", recurse=True)) == 1, loaded.graph
    assert "torch.add_(out, 1)" not in loaded.code.split("ops.prim.RaiseException")[1], loaded.code


class RaisesInItsScope(nn.Module):
    """tests/test_serialization.py's model: a scope whose block ends in a
    raise, after an early return. Eager's mm casts both operands to
    bfloat16 and runs (outside the scope, float16 against float32 raises
    another error), writes `out`, then the raise leaves the scope."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(rand(4, 4, seed=4))

    def forward(self, x, out, flag: bool):
        if not flag:
            return x
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out.copy_(torch.mm(x.half(), self.w))
            raise ValueError("stopped")
        return x


@pytest.mark.parametrize("freeze", [False, True], ids=["scripted", "frozen"])
def test_restore_exits_cut_by_raises_jitamp_loaded_model_runs_as_eager(tmp_path, freeze):
    """The same loss cut the scope's autocast_exit from a saved jitamp
    model; loaded, it gets the exit back (after the raise) and raises
    eager's error after eager's write, leaving the state as it was."""
    model = RaisesInItsScope().eval()
    scripted = script(model)
    if freeze:
        scripted = torch.jit.freeze(scripted)
    path = str(tmp_path / "model.pt")
    torch.jit.save(scripted, path)
    loaded = torch.jit.load(path)
    (raise_,) = loaded.graph.findAllNodes("prim::RaiseException", recurse=True)
    kinds = [node.kind() for node in raise_.owningBlock().nodes()]
    assert kinds[kinds.index("prim::RaiseException") + 1:] == ["jitamp::autocast_exit"], loaded.graph
    for outer in (None, cpu_autocast()):
        with torch.no_grad():
            check_against_eager(model, [X, torch.zeros(4, 4), True], scripted=loaded, outer=outer)
        written = []
        for fn in (model, loaded):
            out = torch.zeros(4, 4)
            with torch.no_grad(), (outer() if outer else contextlib.nullcontext()):
                with pytest.raises(Exception, match="stopped"):
                    fn(X, out, True)
            written.append(out)
        assert torch.equal(written[0], written[1])


# --- keep_loops_out_of_line ---------------------------------------------------


def nested_loops(x0: Tensor, x1: Tensor, n: int) -> Tuple[Tensor, List[Tensor]]:
    # Fuzz finding 6 (tests/regressions/jitamp_nested_loop_emitted_inline.py,
    # tests/scenarios/test_loops_out_of_line.py): the inner loop carries v3,
    # one output used once, by the outer body's return, which reads v6
    # first; emitted there inline, its first iteration moves v6 out.
    sink: List[Tensor] = []
    v3 = x0
    v6 = x0
    for i in range(n):
        v6 = torch.mm(x0, x1) + x0
        for j in range(n):
            sink.append(torch.trace(v6) + x1)
            v3 = x0
    return v6, sink


def _plain_run(fn, args, optimize: bool) -> None:
    with torch.jit.optimized_execution(optimize):
        for _ in range(3):
            fn(*args)


def test_keep_loops_out_of_line_plain_torchscript_loses_a_value_in_an_inline_loop():
    """Plain TorchScript's interpreter loses v6 in the inner loop's second
    iteration: on the unoptimized plan, and on the optimized one too, the
    trip count being known only at run time. Eager runs."""
    nested_loops(X, Y, 2)
    plain = script_without_jitamp(nested_loops)
    for optimize in (False, True):
        with pytest.raises(RuntimeError, match=INTERPRETER_LOST_A_VALUE):
            _plain_run(plain, (X, Y, 2), optimize)


@pytest.mark.parametrize("profiling_executor", [False, True], ids=["simple", "profiling"])
@pytest.mark.parametrize("outer", [None, cpu_autocast()], ids=["no_outer", "outer_bf16"])
def test_keep_loops_out_of_line_jitamp_runs_it_as_eager(outer, profiling_executor):
    check_against_eager(nested_loops, [X, Y, 2], outer=outer,
                        scripted=script(nested_loops, profiling_executor=profiling_executor))


# --- keep_ifs_out_of_line -----------------------------------------------------


def loop_in_an_if(x0: Tensor, flag: bool) -> List[Tensor]:
    # Fuzz seed 1134, index 6768, shrunk: the inner if (one output, v10,
    # used once by the outer branch's return, which reads v3 first) holds
    # a loop that reads v3. An if has no carried values: jitamp's simple
    # executor puts an op after it (KeepIfsOutOfLine). (Also a case of
    # tests/scenarios/test_loops_out_of_line.py.)
    sink: List[Tensor] = []
    v3 = x0
    v10 = x0
    if not flag:
        v3 = torch.exp(v3)
        if not flag:
            v10 = torch.softmax(x0, -1)
            k = 0
            while k < 2:
                k += 1
                sink.append(torch.trace(x0) + v3)
    sink.append(v3 * 2)
    sink.append(v10 * 2)
    return sink


def test_keep_ifs_out_of_line_plain_torchscript_loses_a_value_in_a_loop_of_an_inline_if():
    """Plain TorchScript emits the inner if inline and loses v3 in its
    loop's second iteration, on the unoptimized plan and on the optimized
    one (a `while` loop, which its unrolling leaves rolled). Eager runs."""
    loop_in_an_if(X, False)
    plain = script_without_jitamp(loop_in_an_if)
    for optimize in (False, True):
        with pytest.raises(RuntimeError, match=INTERPRETER_LOST_A_VALUE):
            _plain_run(plain, (X, False), optimize)


@pytest.mark.parametrize("profiling_executor", [False, True], ids=["simple", "profiling"])
@pytest.mark.parametrize("outer", [None, cpu_autocast()], ids=["no_outer", "outer_bf16"])
def test_keep_ifs_out_of_line_jitamp_runs_it_as_eager(outer, profiling_executor):
    """jitamp's plans run it as eager; the simple executor's plan holds
    the op KeepIfsOutOfLine puts after the if."""
    scripted = script(loop_in_an_if, profiling_executor=profiling_executor)
    check_against_eager(loop_in_an_if, [X, False], outer=outer, scripted=scripted)
    if not profiling_executor:
        scripted(X, False)
        plan = torch.jit.last_executed_optimized_graph()
        assert len(plan.findAllNodes("jitamp::keep_out_of_line")) == 1, plan


# --- repair_frozen_call_stacks ------------------------------------------------

# A frozen model whose error is raised in code freezing inlined from a
# submodule (found by the fuzzer: it crashed the process). Run in a process
# of its own: reading freed memory may crash it.
FROZEN_PROGRAM = textwrap.dedent('''
    from typing import List

    import torch
    from torch import Tensor

    import jitamp
    import oracle

    JITAMP = {jitamp!r}
    if JITAMP:
        jitamp.enable()


    class Sub(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(4, 4))

        def forward(self, a: Tensor, sink: List[Tensor]) -> Tensor:
            v = torch.addmm(a, self.w, a); sink.append(v)
            v.addmm_(v, a)
            u = torch.stack([self.w, a, a])[1]; sink.append(u)
            return a


    class Prog(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(4, 4))
            self.sub = Sub()

        def forward(self, x: Tensor) -> List[Tensor]:
            sink: List[Tensor] = []
            v = self.sub(self.w, sink); sink.append(v)
            return sink


    with oracle.torchscript_deprecation_ignored():
        model = Prog().eval()
        scripted = torch.jit.script(model).eval()
        methods = scripted.sub._c._method_names()  # (its type's)
        assert methods == ["forward"], methods
        frozen = torch.jit.freeze(scripted)
        # freezing inlined Sub.forward into Prog.forward (no call left);
        # plain freezing also removed the submodule, deleting the method of
        # its type (a clone of Sub's: docs/facts.md; Python cannot reach it)
        print("inlined", frozen.graph.findAllNodes("prim::CallMethod") == [])
        print("submodule kept", frozen._c.hasattr("sub"))
        if JITAMP:
            oracle.check_against_eager(model, [torch.randn(4, 4)], scripted=frozen,
                                       outer=lambda: torch.autocast("cpu", dtype=torch.bfloat16))
        try:
            with torch.autocast("cpu", dtype=torch.bfloat16):
                frozen(torch.randn(4, 4))
        except RuntimeError as error:
            frames = [line.strip() for line in str(error).splitlines() if line.strip().startswith("File ")]
            print("frames", frames)
    print("done")
''')


def _run_frozen_program(tmp_path, with_jitamp: bool):
    return oracle.run_program(tmp_path, FROZEN_PROGRAM.format(jitamp=with_jitamp))


def test_repair_frozen_call_stacks_plain_torch_jit_freeze_deletes_the_inlined_methods(tmp_path):
    """What can be shown of the bug on plain TorchScript on 2.13: freezing
    inlines Sub.forward into forward and removes the submodule (deleting
    the method of its type, which Python cannot reach), and an error
    raised in the inlined code is still reported with a frame for it, read
    from the nodes' inlined call stacks, whose Function pointers point at
    the deleted method. The read of freed memory itself does not show on
    this program and torch: the process survives and both frames are named
    `forward` (run under valgrind's memcheck once, when this test was
    written, it reported no read of freed memory either). docs/facts.md
    records plain TorchScript on 2.13 printing a frame named "addmm" for a
    `forward`, and a frozen jitamp model without the repair crashing. So
    this asserts the precondition (the call inlined, the submodule gone,
    the inlined code's frame reported), not the use after free; it fails
    on a torch whose freeze stops inlining and removing the method."""
    done = _run_frozen_program(tmp_path, with_jitamp=False)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert lines[-1] == "done" and "inlined True" in lines and "submodule kept False" in lines, done.stdout
    (frames,) = [line for line in lines if line.startswith("frames ")]
    assert frames.count("File ") == 2, frames


def test_repair_frozen_call_stacks_jitamp_frozen_model_runs_as_eager(tmp_path):
    """The same program frozen with jitamp: eager's error at every call
    (check_against_eager), and the error report names both frames
    `forward`, in a process that does not crash."""
    done = _run_frozen_program(tmp_path, with_jitamp=True)
    assert done.returncode == 0, (done.returncode, done.stderr[-3000:])
    lines = done.stdout.splitlines()
    assert lines[-1] == "done" and "inlined True" in lines, done.stdout
    (frames,) = [line for line in lines if line.startswith("frames ")]
    assert frames.count("File ") == 2 and frames.count("in forward") == 2, frames
