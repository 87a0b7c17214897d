"""Bugs the differential fuzzer (tools/jitamp_fuzz) found, one test each: the
shrunk reproducer in tests/regressions/ (README.md there) must compare
equal to eager ("ok"), or, for TorchScript's own behaviour, be recognized
as the "known:" kind it is.

1. A forked task's subgraph ran under TorchScript's default executor, whose
   optimizations change results (DecomposeOps splits a bfloat16 addmm into
   mm + add, rounding twice). Fixed: the fork's plan is made without graph
   optimizations, as the simple executor's are (task_ops.cpp).
2. jitamp cast an op's arguments first to last; eager's autocast kernels
   cast them in C++ argument-evaluation order (last first with GCC), so
   backward summed the gradients of a value an op takes twice in another
   order (low-precision rounding). Fixed: the pass inserts casts in eager's
   order, probed once (eagerCastsLastArgumentFirst, ir/op_casts.h).
3. A function decorated with @torch.autocast(...) was scripted as if its
   body were in a `with torch.autocast(...)` made at each call, so a dtype
   or cache flag the decorator leaves out came from the caller; eager's
   decorator object resolves them when it decorates. Fixed: the `with` gets
   the object's dtype and cache flag (jitamp/_decorators.py).
5. (torch < 2.5) After a save and load, `with ac:` on an `as` name that
   eager binds to None raised before an earlier op's error: jitamp's raise
   was a prim::RaiseException, behind which TorchScript's front end made
   the rest unreachable and deleted the op. Fixed: jitamp::raise_as_eager.
6. TorchScript's interpreter lost a value read in a loop that it emitted
   inline ("Expected Tensor but got None"), on jitamp's simple executor
   with constant trip counts too. Fixed: KeepLoopsOutOfLine.
9. (no autocast) The graph every executor runs is the one TorchScript
   preoptimizes at the first call, whose peephole pass folds `x.t().t()` to
   `x`, across inlined callees too: backward, without two TBackward nodes,
   summed a float64 gradient in another order (1.8e-15).
10. The same fold inside a bfloat16 scope: `mm(x0, x0.t().t())` became
   `mm(x0, x0)`, so both casts shared eager's cached cast of x0 (a leaf that
   requires grad), where eager casts the view apart (never cached), and
   backward summed the two gradients in bfloat16, not float32 (7.6e-6).
   Fixed, both: jitamp makes the graph the executors run, TorchScript's
   passes less that fold (preoptimize.h; tests/test_preoptimize.py).

11. A frozen model computed `F.pad(w.to(bfloat16), mode="reflect")` of a
   frozen weight `w` once, at freezing, where no autocast was on: the
   constant propagation of torch.jit.freeze runs every op whose inputs are
   constants. Called under an eager autocast, eager runs that pad's
   reflection_pad1d in float32 (CPU's fp32 policy, applied by the
   dispatcher inside the composite `pad`; jitamp's IR has no cast there),
   so the frozen model gave bfloat16 where eager gives float32. Fixed: such
   ops get a fold barrier, which FoldStaticCasts settles (fold_barriers.h;
   tests/test_fold_barriers.py).
12. (found with 11's fix, which folds more) FoldStaticCasts took code after
   an early return inside a scope for code inside it: TorchScript's exit
   transform puts the scope's exit and the code after the `with` in two ifs
   on its flags, and the walk kept a scope open where one branch of an if
   closed it and the other did not. Once freezing had folded the `if`
   around the scope (its condition a frozen weight's), a conv's weight
   after the scope was cast under the scope's float16. Fixed: such a scope
   is "maybe closed", and no state it might govern is static there
   (open_scopes.h; tests/test_freeze.py, EarlyExitInScope).
13. (found with 11's fix) FoldStaticCasts folds casts again after the ops it
   does at freezing, and reused the constants of the first round, which the
   settling's constant propagation may have removed: a use after free
   (freezing crashed). Fixed: each round makes its own.
14. (TorchScript's, not jitamp's) A frozen model does not raise where
   eager raises in dead code: under a caller's float16 CPU autocast, a bmm
   whose result nothing reads raises eager's "expected scalar type Half
   but found Float"; once freezing had folded the casts of its static
   scope, dead code elimination removed the loop around it. Plain
   TorchScript never runs an op nothing reads either (scripted or frozen,
   without autocast): the runner reports such an error, where every op of
   the line eager raises on is dead in the program scripted without
   jitamp, as "known:dead-code".
19. (torch 2.15; 2.13 too) The profiling executor's plan, with gradients,
   a float16 input under an eager bfloat16 region: quantile runs in float32
   there, layer_norm of the input stays float16, and their sum's subgraph
   handed layer_norm's formula a float32 gradient ("expected scalar type
   Half but found Float"); eager's engine casts it. Fixed: an op that reads
   a value a float32 or promote cast raised reads every tensor through a
   boundary (preoptimize.cpp, AutodiffBoundaries).
20. Eager's cast cache, keyed by the tensor alone, hands a scope of one
   dtype the cast of a leaf made under a scope of another (the generator
   avoided such programs before). With grad mode on, jitamp's cast passed
   that cast to the op, whose kernel cast it again; with it off, jitamp's
   first cast was made without the cache (found: seed 1327, index 10908).
   Fixed: it passes the tensor, and the kernel meets the entry, which a
   cast made without the cache puts there first when a scope of another
   dtype meets the weight (cast_ops.cpp, cachedCast and keepInEagerCache;
   tests/scenarios/test_nesting.py).

And differences that are TorchScript's, not jitamp's. Of forks: a forked
task runs on another thread, whose autograd nodes get that thread's
sequence numbers, so backward sums gradient contributions in another order
(plain TorchScript gives the same gradients; the runner reports
"known:fork-grad-order"), and where two nodes would fail, another fails
first (finding 8); and an op's error in a forked task comes back from
torch.jit.wait as a RuntimeError, eager's class lost
("known:fork-error-class"). Of the profiling executor's symbolic autodiff:
a formula that saves a view eager's derivative does not, so that where an
in-place op changes a tensor backward needs, the error names that view
(finding 18, "known:profiling-saved-by-formula"). Of dead code: a callee's
dead `out=` write, deleted from its own plan and kept where a caller's loop
inlines it, and a frozen model's `out=` write before a submodule that only
raises, which the model saved and loaded drops ("known:dead-code").
"""
import importlib.util
import io
import os
import re
import subprocess
import sys
import tempfile
import types
from typing import List, Tuple

import pytest
import torch

import jitamp
import oracle
from jitamp_fuzz.runner import run_source

REPRODUCERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "regressions")

pytestmark = pytest.mark.filterwarnings("ignore:`torch\\.jit\\.\\w+` is deprecated")


def _run_showing(name: str):
    """_run, skipping where the program shows no difference on the installed
    torch (it shows one in an error the torch it was found on raises: on
    2.4.1, e.g., cdist has a bfloat16 kernel)."""
    result = _run(name)
    if result.kind == "ok":
        pytest.skip(f"{name}: no difference on torch {torch.__version__}")
    return result


def _run(name: str):
    with open(os.path.join(REPRODUCERS, name)) as f:
        source = f.read()
    with tempfile.TemporaryDirectory() as d:
        return run_source(source, d)


def test_every_reproducer_is_named_by_the_scheme_and_run_here():
    """tests/regressions/README.md: jitamp_<what>.py must compare "ok",
    torchscript_<what>.py is TorchScript's own behaviour ("known:"); each is
    named in this file, and none is collected by pytest itself."""
    with open(__file__) as f:
        this = f.read()
    names = sorted(n for n in os.listdir(REPRODUCERS) if n.endswith(".py"))
    assert names
    for name in names:
        assert name.startswith(("jitamp_", "torchscript_")), name
        assert f'"{name}"' in this, f"{name} is run by no test"


@pytest.mark.parametrize("name", [
    "jitamp_fork_plan_splits_addmm.py",
    "jitamp_cast_order_grad.py",
    "jitamp_cast_order_grad_module.py",
    "jitamp_decorator_cache_flag.py",
    "jitamp_frozen_folds_reflect_pad.py",
    "jitamp_fold_after_early_exit.py",
    "jitamp_profiling_float32_row_meets_a_half_input.py",
    "jitamp_stale_cache_under_no_grad.py",
    "jitamp_pooled_constants_at_load.py",
    "jitamp_uncached_record_outlives_eager_cache.py",
    "jitamp_forked_first_cast_under_no_grad.py",
    "jitamp_add_autocast_value_used_outside_its_block.py",
    "jitamp_float32_scope_in_a_mixed_region.py",
    "jitamp_saved_scope_exit_cut_by_a_raise.py",
    "jitamp_standalone_rolls_what_eager_autocasts_inside_roll.py",
])
def test_finding_fixed(name):
    result = _run(name)
    assert result.kind == "ok", result.message


def test_finding25_a_cell_meets_the_other_dtypes_cast_under_no_grad():
    """The scripted module raises eager's error (it returned before the
    fix: mismatch:error); its frozen copy, whose weight is a constant that
    eager's cache never serves, casts afresh: the known frozen outcome."""
    result = _run("jitamp_cell_meets_the_other_dtypes_cast_under_no_grad.py")
    assert result.kind == "known:frozen-cast-cache", (result.kind, result.message)


def test_finding21_frozen_model_saved_and_loaded():
    """finding 21 as a SAVE program: the runner also compares the frozen
    model after torch.jit.save / torch.jit.load (jitamp's loader), which
    was as far off eager as the standalone stock load
    ("frozen-saved-mismatch:value" before KeepConstantsApartInModule)."""
    with open(os.path.join(REPRODUCERS, "jitamp_pooled_constants_at_load.py")) as f:
        source = f.read()
    with tempfile.TemporaryDirectory() as d:
        result = run_source(source, d, save=True)
    assert result.kind == "ok", (result.kind, result.message)


def test_finding13_freezing_does_not_crash():
    """In a process of its own: before the fix, freezing this program
    crashed (a use after free) where that process started afresh."""
    path = os.path.join(REPRODUCERS, "jitamp_refold_after_constant_propagation.py")
    tools = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [tools, os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert "fuzz comparison: ok" in done.stdout, done.stdout[-2000:]


def test_dead_code_of_a_callee_is_dropped_by_its_own_plan_too():
    """finding14: the frozen model did not raise eager's error from a dead
    loop (known:dead-code), which eager reached through the scripted
    callee's plan. That plan now unrolls the loop and drops the dead bmm as
    freezing does: eager returns too, and the program compares ok."""
    result = _run("jitamp_callee_plan_drops_the_dead_loop_freezing_drops.py")
    assert result.kind == "ok", (result.kind, result.message)


_READS = """
import torch


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, x: torch.Tensor, n: int) -> torch.Tensor:
        of_weight = self.w.exp()
        y = x
        for _ in range(n):
            y = y + 1.0
        of_loop = y.cos()
        z = self.w
        for _ in range(2):
            z = x * 2.0
        of_body = z.tan()
        return of_weight + of_loop + of_body + x.sin()
"""


def test_reads_an_argument(tmp_path):
    """A line gone from a frozen graph counts as dead code only where its
    op reads a forward argument: an op of weights alone may have been
    folded (what fold barriers exist for), not removed."""
    from jitamp_fuzz.runner import _reads_an_argument, load_source, unload

    module = load_source(_READS, str(tmp_path), "reads")
    graph = oracle.script_without_jitamp(module.M()).forward.graph.copy()
    lines = {text.strip().split(" ")[0]: n for n, text in enumerate(_READS.split("\n"), 1)}
    rename = {}
    path = module.__file__
    unload(module)
    assert not _reads_an_argument(graph, (path, lines["of_weight"]), rename)
    assert _reads_an_argument(graph, (path, lines["of_loop"]), rename)  # through the loop
    assert _reads_an_argument(graph, (path, lines["of_body"]), rename)  # what the loop's body assigns
    assert _reads_an_argument(graph, (path, lines["return"]), rename)


def _dead_mm_kept_by_a_size_check(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    v = torch.mm(a, b)  # read only by huber_loss's size check
    torch.nn.functional.huber_loss(v, v, reduction="none")
    return a


class _ForksDeadMm(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        fut = torch.jit.fork(_dead_mm_kept_by_a_size_check, x.half(), x)
        return torch.jit.wait(fut)


def test_frozen_drops_a_dead_op_of_a_forked_callee_is_torchscripts():
    """Plain TorchScript (no jitamp, no autocast): a forked callee's op that
    only a size check reads raises in the scripted model, as in eager;
    freezing folds the check and drops the op, so the frozen model
    returns (torchscript_frozen_drops_a_dead_op_of_a_forked_callee.py)."""
    x = torch.ones(4, 4)
    with pytest.raises(RuntimeError, match="same dtype"):
        _ForksDeadMm()(x)
    scripted = oracle.script_without_jitamp(_ForksDeadMm())
    with pytest.raises(RuntimeError, match="same dtype"):
        scripted(x)
    assert torch.equal(torch.jit.freeze(scripted.eval())(x), x.half())


class _Built:
    def __init__(self, a: torch.Tensor):
        self.a = a


def _builds_an_object_nothing_reads(x: torch.Tensor) -> torch.Tensor:
    if bool(x.sum() > 0):  # gt of a complex sum: eager raises
        o = _Built(x)
    return x


def test_dead_object_built_in_an_if_is_torchscripts():
    """Plain TorchScript (no jitamp, no autocast) drops an `if` that only
    builds an object nothing reads, its condition with it: eager raises at
    the condition, the scripted function returns
    (torchscript_dead_object_built_in_an_if.py)."""
    x = torch.randn(4, 4, dtype=torch.complex64)
    with pytest.raises(RuntimeError, match="gt_cpu"):  # NotImplementedError since torch 2.5
        _builds_an_object_nothing_reads(x)
    assert torch.equal(oracle.script_without_jitamp(_builds_an_object_nothing_reads)(x), x)


def _margin_of_a_constant_target(w: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.multi_margin_loss(w, torch.tensor([0, 1, 2, 3]), reduction="none")


def test_plan_made_in_inference_mode_is_torchscripts():
    """Plain TorchScript (no jitamp, no autocast) makes the plan at the
    first call, under inference mode here, folding the target tensor into
    an inference tensor: a later call with grad cannot save it for
    backward, where eager returns (torchscript_plan_made_in_inference_mode.py)."""
    w = torch.nn.Parameter(torch.randn(4, 4))
    scripted = oracle.script_without_jitamp(_margin_of_a_constant_target)
    with torch.inference_mode():
        scripted(w)
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        scripted(w)
    _margin_of_a_constant_target(w)


def _squared_product(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    y = torch.mm(x, w)
    return (y * y).sum(1)


def test_plan_made_with_grad_met_under_inference_mode_is_torchscripts(profiling_executor):
    """The other way round: plain TorchScript's profiling plan, optimized
    with grad on, holds a differentiable graph, whose op saves its inputs
    for backward whatever the grad mode: a call under inference mode with
    an inference tensor input raises (an empty TorchScript traceback: the
    op has no source line), where eager returns
    (torchscript_plan_made_with_grad_met_under_inference_mode.py)."""
    w = torch.nn.Parameter(torch.randn(4, 4))
    scripted = oracle.script_without_jitamp(_squared_product)
    for _ in range(3):
        scripted(torch.randn(4, 4), w)
    with torch.inference_mode():
        x = torch.randn(4, 4)
        assert torch.equal(_squared_product(x, w), _squared_product(x.clone(), w.detach()))
        with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
            scripted(x, w)


@pytest.mark.parametrize("thread, outer, executor, eager, known", [
    (0, "inference_mode", "profiling", "eager raised RuntimeError('mat1 and mat2 ...')", True),
    (0, "inference_mode", "simple", "eager raised RuntimeError('mat1 and mat2 ...')", False),
    (0, "no_grad", "profiling", "eager returned", False),
    (1, "inference_mode", "simple", "eager returned", True),
    (1, "inference_mode", "simple", "eager raised RuntimeError('mat1 and mat2 ...')", True),
    (1, "inference_mode", "simple",
     "eager raised RuntimeError('Inference tensors cannot be saved for backward. Please ...')", False),
])
def test_which_thread_met_a_plan_of_the_other_grad_mode(thread, outer, executor, eager, known):
    """runner._plan_made_in_the_other_mode: the inference thread (0) meets
    the profiling executor's differentiable graphs made with grad (seed
    112903, index 49203, a race: about one run in four, so the reproducer
    is run in test_a_race_of_plans_is_never_a_mismatch); the grad thread (1)
    meets a constant folded under inference mode, where eager returns or
    raises another error further on (seed 271128, index 14989), not where
    eager raises that error too."""
    from jitamp_fuzz import runner

    module = types.ModuleType("threads")
    module.OUTER, module.EXECUTOR = outer, executor
    message = (f"call 3: messages differ\n{eager}\nscripted raised RuntimeError('The following "
               f"operation failed in the TorchScript interpreter.\\nRuntimeError: "
               f"{runner._INFERENCE_TENSOR_SAVED}. Please ...')\n(in thread {thread} of 2, "
               f"eager region {outer!r})")
    assert runner._plan_made_in_the_other_mode(module, message, thread) is known


@pytest.mark.parametrize("name", [
    "torchscript_plan_made_with_grad_met_under_inference_mode.py",  # seed 112903, index 49203
    "torchscript_constant_folded_under_inference_mode_then_another_error.py",  # seed 271128, index 14989
])
def test_a_race_of_plans_is_never_a_mismatch(name):
    """The reproducers of indices 49203 and 14989 compare ok, or meet the
    plan the other thread made (as the race goes), never a mismatch."""
    kind = _run(name).kind
    assert kind in ("ok", "known:inference-mode-plan"), kind


def test_dead_library_op_error_recognized():
    """finding15: the op that raises is in a library function, and what kept
    it alive in the scripted helper is a check freezing folds: its line has
    no node left in the frozen model, with or without jitamp."""
    result = _run("torchscript_frozen_drops_a_dead_library_op_that_raises.py")
    assert result.kind == "known:dead-code", (result.kind, result.message)
    assert "mixed dtype (CPU)" in result.message


def test_dead_code_error_then_another_recognized():
    """finding17: eager raises in dead code; the frozen model, which dropped
    it, raises another error further on."""
    result = _run("torchscript_frozen_drops_dead_code_then_raises_later.py")
    assert result.kind == "known:dead-code", (result.kind, result.message)
    assert "messages differ" in result.message


def _cat_out_dtype_error_class() -> type:
    """The class eager raises for cat's out= dtype check: TypeError, or
    RuntimeError on torch 2.4 (test_type_error_class_is_torchscripts)."""
    try:
        torch.cat([torch.ones(2, 2)], 0, out=torch.zeros(2, 2, dtype=torch.long))
    except (TypeError, RuntimeError) as error:
        return type(error)
    raise AssertionError("cat into a long tensor did not raise")


def test_frozen_error_class_recognized():
    """finding16: TorchScript's own differences are recognized on the frozen
    model too (a TypeError re-raised as RuntimeError). Where eager raises
    RuntimeError itself (torch 2.4), nothing differs."""
    result = _run("torchscript_frozen_error_class.py")
    expected = "known:torchscript-error-class" if _cat_out_dtype_error_class() is TypeError else "ok"
    assert result.kind == expected, (result.kind, result.message)


class _DeadMismatch(torch.nn.Module):
    def forward(self, a: torch.Tensor) -> torch.Tensor:
        for _ in range(2):
            b = torch.mm(a, torch.ones(3, 5))  # nothing reads b
        return a


def test_dead_code_error_is_torchscripts():
    """Plain TorchScript (no jitamp, no autocast) never runs an op whose
    result nothing reads, so it does not raise its error: scripted and
    frozen alike, where eager raises."""
    def dead(a: torch.Tensor) -> torch.Tensor:
        b = torch.mm(a, torch.ones(3, 5))  # noqa: F841
        return a

    a = torch.ones(4, 4)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        dead(a)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        _DeadMismatch()(a)
    assert torch.equal(oracle.script_without_jitamp(dead)(a), a)
    scripted = oracle.script_without_jitamp(_DeadMismatch())
    assert torch.equal(scripted(a), a)
    assert torch.equal(torch.jit.freeze(scripted.eval())(a), a)


_LIVENESS = """
import torch
from typing import List, Tuple


class M(torch.nn.Module):
    def forward(self, x: torch.Tensor, flag: bool) -> List[torch.Tensor]:
        sink: List[torch.Tensor] = []
        returned = x.cos()
        carried = x
        for _ in range(2):
            carried = carried.neg()
            only_by_dead = carried.sqrt()
            carried = carried + only_by_dead
        kept = x
        for _ in range(2):
            kept = kept.neg()
            sink.append(x.tan())
            if bool(x.sum() > 0):
                print(x.abs())
        gone = x.sin()
        return [returned] + sink
"""


def test_live_lines(tmp_path):
    """The runner's liveness of source lines (what TorchScript's dead code
    elimination keeps), which decides "known:dead-code"."""
    from jitamp_fuzz.runner import _live_lines, load_source, unload

    module = load_source(_LIVENESS, str(tmp_path), "liveness")
    graph = oracle.script_without_jitamp(module.M()).forward.graph.copy()
    torch._C._jit_pass_inline(graph)
    lines = {line: alive for (path, line), alive in _live_lines(graph).items() if path == module.__file__}
    unload(module)
    source = _LIVENESS.split("\n")
    live = {source[n - 1].strip().split(" ")[0]: alive for n, alive in lines.items()}
    assert live["returned"] is True
    # a loop whose carried value nothing reads after it, and what it reads
    assert live["carried"] is False
    assert live["only_by_dead"] is False
    # a loop with effects: all it carries counts as live (TorchScript's dead
    # code elimination would drop `kept`: the check errs toward live)
    assert live["kept"] is True
    assert live["sink.append(x.tan())"] is True  # a write to a returned list
    assert live["if"] is True  # the condition of an if that prints
    assert live["print(x.abs())"] is True
    # TorchScript's front end removed this one already (outside the with
    # block): no node, so no say (the runner's check counts it live)
    assert "gone" not in live


def test_fork_gradient_order_is_torchscripts():
    """torchscript_fork_gradient_order.py: jitamp's gradients differ from eager's, and are
    plain TorchScript's, bit for bit (no autocast in the program)."""
    assert _run("torchscript_fork_gradient_order.py").kind == "known:fork-grad-order"
    spec = importlib.util.spec_from_file_location("finding1_fork_grad", os.path.join(REPRODUCERS, "torchscript_fork_gradient_order.py"))
    program = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(program)

    def grads(fn):
        args = program.make_args(1)
        x0 = args[0].requires_grad_()
        out, sink = fn(*args)
        sum(t.float().sum() for t in [out, *sink]).backward()
        return x0.grad

    plain = oracle.script_without_jitamp(program.prog)
    with_jitamp = oracle.script(program.prog)
    with jitamp.enable():
        assert torch.equal(grads(with_jitamp), grads(plain))
    assert not torch.equal(grads(program.prog), grads(plain))


def _load(name: str):
    """A finding's program as a fresh module (TorchScript keeps what it
    compiled, and how it ran, with the function object)."""
    _load.count = getattr(_load, "count", 0) + 1
    spec = importlib.util.spec_from_file_location(f"{name[:-3]}_{_load.count}", os.path.join(REPRODUCERS, name))
    program = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(program)
    return program


def _casts_before(graph, op: str) -> List[int]:
    """The inputs of `op` (by index) whose smart casts run just before it,
    in the order they run."""
    node = next(n for n in graph.nodes() if n.kind() == op)
    producers = {i.node(): k for k, i in enumerate(node.inputs())}
    order, prev = [], node.prev()
    while prev in producers:
        order.insert(0, producers.pop(prev))
        prev = prev.prev()
    return order


@pytest.mark.parametrize("saved_last_first", [True, False], ids=["saved-last-first", "saved-first-first"])
def test_finding2_casts_saved_in_another_compilers_order_run_in_this_torchs(tmp_path, saved_last_first):
    """Finding 2 through a save: eager casts an op's arguments in its
    compiler's order (last first with GCC, first first with clang), so a
    model saved by a torch built by one compiler and loaded by a torch
    built by the other carries the other order (simulated: the saving side
    inserts in the order given). Loading puts the casts in this torch's
    order, and backward sums the gradient of v2, which
    margin_ranking_loss reads twice, as this torch's eager does."""
    name = "jitamp_cast_order_grad.py"
    path = str(tmp_path / "finding2.pt")
    jitamp._C.testing.override_cast_order(saved_last_first)
    try:
        saved = oracle.script(_load(name).prog)
        torch.jit.save(saved, path)
    finally:
        jitamp._C.testing.override_cast_order(None)
    op = "aten::margin_ranking_loss"
    assert _casts_before(saved.inlined_graph, op) == ([2, 1, 0] if saved_last_first else [0, 1, 2])
    loaded = torch.jit.load(path)
    assert _casts_before(loaded.inlined_graph, op) == _casts_before(oracle.script(_load(name).prog).inlined_graph, op)
    program = _load(name)
    oracle.check_against_eager(program.prog, program.make_args(1), scripted=loaded, grad=True,
                               outer=oracle.cpu_autocast(torch.float16))


_MM_CAST = """graph(%x : Tensor, %y : Tensor):
  %r : int = jitamp::autocast_caller_region()
  %d : str = prim::Constant[value="cpu,cuda"]()
{casts}
  %z : Tensor = aten::mm(%a, %b)
  return (%z)"""
_CAST_X = "  %a : Tensor = jitamp::autocast_to_fp16(%x, %d, %r)"
_CAST_Y = "  %b : Tensor = jitamp::autocast_to_fp16(%y, %d, %r)"


def _mm_casts_after_the_pass(*lines: str) -> List[int]:
    graph = torch._C.parse_ir(_MM_CAST.format(casts="\n".join(lines)))
    jitamp.rewrite_graph(graph)
    assert len(graph.findAllNodes("jitamp::autocast_to_fp16")) == 2, graph
    return _casts_before(graph, "aten::mm")


def test_casts_in_either_order_are_put_in_this_torchs():
    """The IR form of the test above: mm's two casts, as either compiler's
    torch saved them, come out in the order the pass inserts them in."""
    fresh = torch._C.parse_ir(_MM_CAST.format(casts="").replace("aten::mm(%a, %b)", "aten::mm(%x, %y)"))
    jitamp.rewrite_graph(fresh)
    ours = _casts_before(fresh, "aten::mm")
    assert sorted(ours) == [0, 1]
    assert _mm_casts_after_the_pass(_CAST_X, _CAST_Y) == ours
    assert _mm_casts_after_the_pass(_CAST_Y, _CAST_X) == ours


def test_casts_apart_from_their_op_are_left_where_they_are():
    """Something runs between the casts (freezing or another pass put it
    there): moving a cast past it is not the pass's to judge."""
    graph = torch._C.parse_ir(_MM_CAST.format(
        casts="\n".join([_CAST_Y, "  %w : Tensor = aten::relu(%x)", _CAST_X])))
    before = str(graph)
    jitamp.rewrite_graph(graph)
    assert str(graph) == before


def test_fork_backward_error_order_is_torchscripts():
    """torchscript_fork_backward_error_order.py: backward meets two failing
    nodes. Eager fails at the NotImplemented node of `softmax(..., out=v7)`
    (numbered UINT64_MAX: it runs as soon as it is ready, once the forked
    function's nodes have run); jitamp, as plain TorchScript, at gelu's
    check of v7's version, which runs first because the task's nodes,
    numbered on its thread, come after it."""
    assert _run("torchscript_fork_backward_error_order.py").kind == "known:fork-grad-order"

    def backward_error(model) -> str:
        args = [a.requires_grad_() for a in program.make_args(1)]
        x0, sink = model(*args)
        with pytest.raises(RuntimeError) as raised:
            sum(t.sum() for t in [x0, *sink] if t.requires_grad).backward()
        return str(raised.value)

    program = _load("torchscript_fork_backward_error_order.py")
    assert backward_error(program.build()) == "derivative for aten::softmax is not implemented"
    plain = oracle.script_without_jitamp(program.build())
    with_jitamp = oracle.script(program.build())
    assert "modified by an inplace operation" in backward_error(plain)
    assert backward_error(with_jitamp) == backward_error(plain)


def test_fork_backward_meets_autocasts_cat_first_is_eagers_error_first(tmp_path):
    """torchscript_fork_backward_meets_autocasts_cat_first.py: backward, in
    the caller's bfloat16 region, meets two failing nodes: v25's in-place
    check (eager's error) and gru_cell's unsafe_chunk backward, whose cat of
    a float16 and a bfloat16 gradient autocast's promote refuses. The fork's
    nodes, numbered on the task's thread, bring the cat first (the runner
    tells the scripted error a backward one by where it is raised: its
    words name no backward); eager without the in-place write raises that
    same error there."""
    name = "torchscript_fork_backward_meets_autocasts_cat_first.py"
    assert _run(name).kind == "known:fork-grad-order"
    with open(os.path.join(REPRODUCERS, name)) as f:
        source = f.read()
    assert source.count("    v25.mul_(2.0)\n") == 1
    path = tmp_path / "without_the_inplace_write.py"
    path.write_text(source.replace("    v25.mul_(2.0)\n", ""))
    spec = importlib.util.spec_from_file_location("without_the_inplace_write", path)
    program = importlib.util.module_from_spec(spec)
    with jitamp.enable():  # the @torch.jit.script callee compiles at import
        spec.loader.exec_module(program)
    _, error, _, _ = oracle.run_side(program.build(), program.make_args(1),
                                     lambda: torch.autocast("cpu", dtype=torch.bfloat16), True)
    assert "Unexpected floating ScalarType in at::autocast::prioritize" in str(error)


def _x0_grad(fn, program, optimize: bool = True) -> torch.Tensor:
    args = program.make_args(1)
    x0 = args[0].requires_grad_()
    with torch.jit.optimized_execution(optimize):
        v13, _, v5, sink = fn(*args)
        sum(t.sum() for t in [v13, v13, v5, *sink]).backward()
    return x0.grad


def test_peephole_transpose_gradient_fixed():
    """jitamp_peephole_transpose_grad.py (float64, no autocast): plain
    TorchScript's gradient differs from eager's in its last bits (its
    preoptimization folds `v3.t().t()`, two calls of h1, to v3, and
    backward, without two TBackward nodes, sums another way); jitamp's,
    on the plan it makes itself, is eager's."""
    name = "jitamp_peephole_transpose_grad.py"
    assert _run(name).kind == "ok"
    program = _load(name)
    eager = _x0_grad(program.prog, program)
    plain = _x0_grad(oracle.script_without_jitamp(_load(name).prog), program)
    unoptimized = _x0_grad(oracle.script_without_jitamp(_load(name).prog), program, optimize=False)
    with jitamp.enable():
        with_jitamp = _x0_grad(oracle.script(_load(name).prog), program)
    assert torch.equal(with_jitamp, eager)
    assert not torch.equal(plain, eager)
    assert torch.equal(unoptimized, eager)


def test_fork_error_class_is_torchscripts():
    """torchscript_fork_error_class.py: NotImplementedError in eager, a
    RuntimeError with its message through TorchScript's fork."""
    assert _run_showing("torchscript_fork_error_class.py").kind == "known:fork-error-class"

    def forked(a: torch.Tensor) -> torch.Tensor:
        return torch.cdist(a, a)

    def forks(a: torch.Tensor) -> torch.Tensor:
        return torch.jit.wait(torch.jit.fork(forked, a))

    plain = oracle.script_without_jitamp(forks)
    with pytest.raises(NotImplementedError):
        forks(torch.ones(2, 2, dtype=torch.bfloat16))
    with pytest.raises(RuntimeError) as raised:
        plain(torch.ones(2, 2, dtype=torch.bfloat16))
    assert type(raised.value) is RuntimeError


def test_linalg_error_recognized():
    """torch.linalg's LinAlgError, which TorchScript re-raises as
    RuntimeError (plain TorchScript too)."""
    kind = _run_showing("torchscript_linalg_error_class.py").kind
    if kind == "known:fork-error-class":  # TorchScript's too, tested below
        pytest.skip(f"on torch {torch.__version__} an op in the forked task fails first "
                    "(aten::trace has no bfloat16 kernel there)")
    assert kind == "known:torchscript-error-class"


def test_type_error_with_a_quote_recognized():
    """c10's TypeError, which TorchScript re-raises as RuntimeError, with an
    apostrophe in its message (the oracle's reprs escape it differently on
    the two sides)."""
    assert _run_showing("torchscript_type_error_class_quoted.py").kind == "known:torchscript-error-class"


def test_type_error_class_is_torchscripts():
    def casts_into_long(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        return torch.cat([x, x], 0, out=out)

    x, out = torch.ones(2, 2), torch.zeros(4, 2, dtype=torch.long)
    with pytest.raises((TypeError, RuntimeError)) as eager:
        casts_into_long(x, out)
    if type(eager.value) is RuntimeError:  # torch 2.4.1: c10 raised no TypeError here yet
        pytest.skip(f"eager raises RuntimeError on torch {torch.__version__}: no class for TorchScript to lose")
    assert type(eager.value) is TypeError
    with pytest.raises(RuntimeError) as raised:
        oracle.script_without_jitamp(casts_into_long)(x, out)
    assert type(raised.value) is RuntimeError


def test_linalg_error_class_is_torchscripts():
    def inverts(x: torch.Tensor) -> torch.Tensor:
        return torch.linalg.inv(x)

    with pytest.raises(torch.linalg.LinAlgError):
        inverts(torch.zeros(2, 2))
    with pytest.raises(RuntimeError) as raised:
        oracle.script_without_jitamp(inverts)(torch.zeros(2, 2))
    assert type(raised.value) is RuntimeError


def test_dead_empty_if_is_torchscripts():
    """Plain TorchScript emits nothing for `if c: pass`, so c's error never
    comes (torchscript_dead_condition_in_a_decorated_helper.py)."""
    def compares(b: torch.Tensor) -> torch.Tensor:
        if bool(b.sum() > 0):
            pass
        return b

    b = torch.randn(2, dtype=torch.complex64)
    with pytest.raises(RuntimeError, match="not implemented for 'ComplexFloat'"):  # (NotImplementedError from 2.5)
        compares(b)
    assert torch.equal(oracle.script_without_jitamp(compares)(b), b)


def test_profiling_complex_grad_is_torchscripts():
    """Plain TorchScript's profiling executor: the symbolic derivative of
    mul and mm of complex tensors conjugates nothing, so from the plan's
    second call the gradients are not eager's
    (torchscript_profiling_complex_grad.py)."""
    def mul(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x * y * 1.0

    def mm(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.mm(x, y) * 1.0

    g = torch.Generator().manual_seed(3)
    x, y = (torch.randn(4, 4, generator=g, dtype=torch.complex64) for _ in range(2))

    def grads(fn):
        a, b = x.clone().requires_grad_(), y.clone().requires_grad_()
        fn(a, b).float().sum().backward()
        return a.grad, b.grad

    previous = torch._C._jit_set_profiling_executor(True)
    try:
        for fn in (mul, mm):
            plain = oracle.script_without_jitamp(fn)
            first, *later = [grads(plain) for _ in range(3)]
            assert all(torch.allclose(e, s) for e, s in zip(grads(fn), first)), fn  # unoptimized: eager's
            assert not torch.allclose(grads(fn)[0], later[-1][0], atol=1e-3), fn
    finally:
        torch._C._jit_set_profiling_executor(previous)


def _real_plus_complex(x0: torch.Tensor, x1: torch.Tensor) -> torch.Tensor:
    return x0.clamp(-1.0, 1.0) + x1[:, :1]


def test_profiling_real_gradient_of_a_complex_sum_is_torchscripts(profiling_executor):
    """known:profiling-complex-grad, as an error: add's symbolic formula
    hands the real (float16) operand the complex gradient, where eager's
    autograd takes its real part; from the plan's second call autograd's
    check raises. Plain TorchScript, no autocast (seed 112902, index 83444:
    torchscript_profiling_complex_gradient_of_a_real_input.py)."""
    def backward(fn) -> str:
        x0 = torch.randn(4, 4).half().requires_grad_()
        x1 = torch.randn(4, 4, dtype=torch.complex64).requires_grad_()
        try:
            fn(x0, x1).abs().sum().backward()
            return str(x0.grad.dtype)
        except RuntimeError as error:
            return str(error).splitlines()[0]
    assert backward(_real_plus_complex) == "torch.float16"
    plain = oracle.script_without_jitamp(_real_plus_complex)
    results = [backward(plain) for _ in range(3)]
    assert results[0] == "torch.float16", results
    assert all("input_is_complex == grad_is_complex" in r for r in results[1:]), results


class _ConvBeforeARaise(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, x: torch.Tensor) -> List[torch.Tensor]:
        sink: List[torch.Tensor] = []
        sink.append(torch.mm(self.w, x))
        if bool(self.w.sum() > -100.0):
            raise ValueError("after the mm")
        return sink


def test_loaded_frozen_model_drops_what_only_a_raise_follows_is_torchscripts():
    """Plain TorchScript, no autocast: frozen, saved and loaded, a raise
    whose condition reads only a weight is unconditional, and the mm before
    it, whose result only the returned list holds, is dropped: its dtype
    error is not raised (torchscript_stock_drops_what_only_a_raise_follows.py)."""
    m = _ConvBeforeARaise().eval()
    x = torch.randn(4, 4, dtype=torch.float64)
    with pytest.raises(RuntimeError, match="expected"):
        m(x)
    frozen = torch.jit.freeze(oracle.script_without_jitamp(m))
    buffer = io.BytesIO()
    torch.jit.save(frozen, buffer)
    loaded = torch.jit.load(io.BytesIO(buffer.getvalue()))
    with torch.no_grad(), pytest.raises(Exception, match="after the mm"):
        loaded(x)


def test_assertion_error_class_is_torchscripts():
    """TorchScript compiles `assert c, msg` and `raise AssertionError(msg)`
    to a raise of "AssertionError: msg" that loses the class: plain
    TorchScript, no jitamp, no autocast."""
    def asserts(x: torch.Tensor) -> torch.Tensor:
        assert bool(x.sum() < 0.0), "too large"
        return x

    def raises(x: torch.Tensor) -> torch.Tensor:
        if bool(x.sum() > 0.0):
            raise AssertionError("too large")
        return x

    for fn in (asserts, raises):
        with pytest.raises(AssertionError, match="^too large"):  # (pytest rewrites eager's assert)
            fn(torch.ones(2))
        with pytest.raises(torch.jit.Error) as raised:
            oracle.script_without_jitamp(fn)(torch.ones(2))
        assert str(raised.value).rstrip().endswith("RuntimeError: AssertionError: too large"), raised.value


class _LinearThenSvdvals(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x: torch.Tensor, half: bool) -> Tuple[torch.Tensor, torch.Tensor]:
        v = x.half() if half else x
        y = self.lin(v)  # float16 input, float32 weight: raises
        s = torch.linalg.svdvals(v)  # no float16 kernel: raises too
        return y, s


def test_profiling_plan_raises_a_later_ops_error_first_in_plain_torchscript():
    """The profiling executor's optimized plan (from the third call) runs
    svdvals, which its symbolic autodiff leaves out of the differentiable
    subgraph, before the linear that eager (and the first calls) reach
    first: plain TorchScript, no jitamp, no autocast. The fuzzer's seed
    112603, index 6771 is this under jitamp scopes (where plain TorchScript
    is no reference): the runner labels it "known:profiling-error-order"
    where the program on the simple executor gives eager's
    (torchscript_profiling_plan_runs_svdvals_before_linear.py)."""
    x = torch.randn(4, 4)
    scripted = oracle.script_without_jitamp(_LinearThenSvdvals())
    with pytest.raises(RuntimeError, match="mat1 and mat2 must have the same dtype"):
        _LinearThenSvdvals()(x, True)
    errors = []
    for call in range(1, 5):
        try:
            scripted(x, call % 2 == 1)
        except (RuntimeError, NotImplementedError) as error:
            errors.append(str(error).splitlines()[-1])
    assert "mat1 and mat2 must have the same dtype" in errors[0], errors
    assert "not implemented for 'Half'" in errors[1], errors


class _BatchedMatmulOfAWeight(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, v: torch.Tensor) -> torch.Tensor:
        return torch.matmul(v.unsqueeze(0).expand(2, 4, 4), self.w).sum(0)


def test_frozen_matmul_of_a_weight_raises_another_message_in_plain_torchscript():
    """A float16 batch times a float32 weight, frozen: eager's (and the
    scripted model's) matmul folds the batch into an mm that says "expected
    m1 and m2 to have the same dtype"; the frozen model, whose weight is a
    constant, raises "expected scalar type Half but found Float". Plain
    TorchScript, no jitamp, no autocast; eager whose weight does not require
    grad raises the frozen model's message. The fuzzer's seed 112701, index
    6809 and seed 112804, index 2288 are this in programs with scopes, where
    the runner asks the program's scope-free twin: "known:frozen-plain-torchscript"
    (torchscript_frozen_profiling_matmul_message.py); seed 112807, index 66799,
    whose float16 comes from a scope (no twin has it), the runner asks eager
    with constant weights: "known:frozen-constant-weights"
    (torchscript_frozen_matmul_of_a_constant_weight.py)."""
    x = torch.randn(4, 4).half()
    model = _BatchedMatmulOfAWeight().eval()
    with torch.no_grad():
        with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype"):
            model(x)
        with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype"):
            oracle.script_without_jitamp(model)(x)
        with oracle.torchscript_deprecation_ignored():
            frozen = torch.jit.freeze(oracle.script_without_jitamp(model))
        with pytest.raises(RuntimeError, match="expected scalar type Half but found Float"):
            frozen(x)
        model.w.requires_grad_(False)
        with pytest.raises(RuntimeError, match="expected scalar type Half but found Float"):
            model(x)


@pytest.mark.skipif(not __import__("jitamp._library", fromlist=["x"]).EAGER_ENTER_RETURNS_NONE,
                    reason="needs torch < 2.5, where eager binds `with ... as ac` to None")
def test_finding5_as_none_after_save_load():
    """Fuzz finding 5: where eager binds `as ac` to None, `with ac:` raises
    (jitamp::raise_as_eager). As a prim::RaiseException it made the rest of
    the function unreachable when a saved model was compiled again, and
    TorchScript then deleted an out= op before it (its result fed only the
    unreachable return) whose error eager raises first."""
    result = _run("jitamp_as_none_after_save_torch24.py")
    assert result.kind == "ok", result.message


class _BindsNone(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> List[torch.Tensor]:
        sink: List[torch.Tensor] = []
        v = torch.mm(x, x)
        sink.append(v)
        with torch.autocast("cpu", dtype=torch.bfloat16) as ac:
            torch.mm(x, x[:3], out=v)
        with ac:
            pass
        return sink


def test_raise_of_a_none_as_name_keeps_what_precedes_it_after_save_load(tmp_path):
    """Finding 5 on any torch: the pass told that eager binds None (as torch
    < 2.5 does). The out= op's error comes first, before and after a save
    and load."""
    from jitamp import _C, _library
    error = ("builtins.TypeError", "'NoneType' object does not support the context manager protocol")
    _C.set_eager_enter_result(True, *error)
    try:
        with jitamp.enable():
            scripted = torch.jit.script(_BindsNone())
    finally:
        _library._tell_the_pass_what_eager_enter_returns()
    assert "jitamp::raise_as_eager" in str(scripted.graph)
    path = str(tmp_path / "m.pt")
    scripted.save(path)
    x = torch.randn(4, 4)
    with pytest.raises(RuntimeError) as eager:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            torch.mm(x, x[:3], out=torch.mm(x, x))
    for model in (scripted, torch.jit.load(path)):
        with pytest.raises(RuntimeError) as raised:
            model(x)
        assert oracle.unwrap_torchscript_error(str(raised.value))[1] == str(eager.value)


@pytest.mark.parametrize("name", ["jitamp_nested_loop_emitted_inline.py", "jitamp_loop_emitted_inline_with_rebinding.py"])
def test_finding6_nested_loops(name):
    """Fuzz finding 6: TorchScript's interpreter emits a loop with one
    carried value, read once, inline where it is read, and so moves a value
    the loop reads out of its register in the first iteration ("Expected
    Tensor but got None"). jitamp's KeepLoopsOutOfLine keeps such loops out
    of line (tests/scenarios/test_loops_out_of_line.py)."""
    result = _run(name)
    assert result.kind == "ok", result.message


def test_finding6_is_the_unoptimized_plans():
    """The same program fails in plain TorchScript on the unoptimized plan
    (another message: the lost value reaches aten::trace itself)."""
    spec = importlib.util.spec_from_file_location(
        "finding6", os.path.join(REPRODUCERS, "jitamp_nested_loop_emitted_inline.py"))
    program = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(program)
    plain = oracle.script_without_jitamp(program.prog)
    program.prog(*program.make_args(1))  # eager runs it
    try:
        with torch.jit.optimized_execution(False):
            plain(*program.make_args(1))
    except Exception as error:  # noqa: BLE001 - the error is what is checked
        assert "no tensor arguments" in str(error)
    else:
        pytest.skip(f"the unoptimized plan keeps the value on torch {torch.__version__}")


FINDING10 = "jitamp_peephole_view_folded_into_cached_cast.py"


def test_finding10_view_folded_into_cached_cast():
    result = _run(FINDING10)
    assert result.kind == "ok", result.message


def test_finding10_is_the_preoptimized_graphs():
    """What TorchScript's preoptimization would do to the rewritten graph
    (what jitamp's own leaves out): its inline + peephole passes replace
    the second aten::t by x0 (v3 = v2.t() with v2 = x0.t())."""
    spec = importlib.util.spec_from_file_location("finding10", os.path.join(REPRODUCERS, FINDING10))
    program = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(program)
    scripted = oracle.script(program.prog)
    graph = scripted.graph.copy()
    assert len(graph.findAllNodes("aten::t")) == 2
    torch._C._jit_pass_inline(graph)
    torch._C._jit_pass_peephole(graph, True)
    assert len(graph.findAllNodes("aten::t")) == 1, graph


def test_saved_view_no_longer_in_a_subgraph():
    """finding18: eager and the profiling executor's plan both raised that a
    tensor backward needs was changed in place, each naming the tensor its
    own backward saved (plain TorchScript too: known:profiling-saved-by-formula,
    whose messages test_known_profiling_differences keeps). mse_loss and
    vector_norm run in float32 under the region (raised values), so cat and
    the adds that read them now read every tensor through a boundary
    (AutodiffBoundaries, fuzz seed 2159, index 7729): cat's formula no
    longer saves the view, and the plan raises eager's error."""
    result = _run("jitamp_profiling_formula_saves_a_view.py")
    assert result.kind == "ok", (result.kind, result.message)


@pytest.mark.parametrize("name", [
    "torchscript_softmax_formula_under_region.py",  # torch 2.4.1: seed 2419, index 1371
    "torchscript_out_grad_float64_under_region.py",  # torch 2.4.1: seed 2419, index 6649
])
def test_plain_torchscript_difference_under_a_region_that_changes_nothing(name):
    """The profiling executor's own differences (plain TorchScript's too)
    in programs called inside an eager autocast region that changes nothing
    they compute: eager with autocast turned off around the program gives
    the region's results, so plain TorchScript outside the region is the
    reference (runner._plain_torchscript_differs)."""
    assert _run_showing(name).kind == "known:profiling-plain-torchscript"


def test_a_region_that_changes_something_is_no_reference():
    """runner._region_changes_nothing: a float32 mm changes under a
    bfloat16 region; a float64 one does not."""
    from jitamp_fuzz import runner

    def mm(x: torch.Tensor) -> torch.Tensor:
        return torch.mm(x, x)

    for dtype, unchanged in ((torch.float32, False), (torch.float64, True)):
        module = types.ModuleType(f"region_{dtype}")
        module.OUTER, module.GRAD, module.EXECUTOR = ("cpu", "bfloat16", True), True, "profiling"
        module.SOURCE = "def mm(x): return torch.mm(x, x)"
        module.make_args = lambda call, dtype=dtype: [torch.randn(4, 4, generator=torch.Generator().manual_seed(call)).to(dtype)]
        assert runner._region_changes_nothing(mm, module) is unchanged, dtype


def test_dead_out_write_kept_in_a_loop_recognized():
    """The scripted program raises from a dead `out=` write that the plan of
    the `@torch.jit.script` callee eager calls has deleted: "known:dead-code"
    (runner._callee_drops_what_raised). The caller's loop has a trip count
    read from an argument: one the plan unrolls whole loses the write too."""
    assert _run("torchscript_dead_out_write_kept_in_a_loop.py").kind == "known:dead-code"


@pytest.mark.parametrize("name, kind", [
    ("torchscript_softmax_formula_uncalled_scope.py", "known:profiling-plain-torchscript"),
    ("torchscript_dead_fft_kept_in_a_loop.py", "known:dead-code"),
    ("torchscript_frozen_cast_cache_of_another_dtype.py", "known:frozen-cast-cache"),
    ("torchscript_fork_error_order_and_node_name.py", "known:fork-grad-order"),
    ("torchscript_dead_conv_in_a_forked_callee.py", "known:dead-code"),
    ("torchscript_profiling_out_grad_before_out_dtype.py", "known:profiling-out-grad"),
    ("torchscript_softmax_formula_empty_scope.py", "known:profiling-plain-torchscript"),
    ("torchscript_frozen_dead_mm_in_a_forked_callee.py", "known:dead-code"),
    ("torchscript_assert_error_class.py", "known:torchscript-error-class"),
    ("torchscript_fork_backward_dtype_error_order.py", "known:fork-grad-order"),
    ("torchscript_raise_assertion_error_class.py", "known:torchscript-error-class"),
    ("torchscript_frozen_profiling_matmul_message.py", "known:frozen-plain-torchscript"),
    ("torchscript_dead_condition_in_a_decorated_helper.py", "known:dead-code"),
    ("torchscript_profiling_complex_grad.py", "known:profiling-complex-grad"),
    ("torchscript_stock_drops_what_only_a_raise_follows.py", "known:dead-code"),
    ("torchscript_plain_plan_skips_an_unread_objects_condition.py", "known:plain-torchscript"),
    ("torchscript_plain_plan_raises_another_error_class.py", "known:plain-torchscript"),
    ("torchscript_frozen_matmul_of_a_constant_weight.py", "known:frozen-constant-weights"),
    ("torchscript_frozen_drops_one_calls_dead_stack.py", "known:dead-code"),
    ("torchscript_stock_drops_a_pairs_op_before_a_raise.py", "known:dead-code"),
    ("torchscript_eagers_scripted_callee_runs_the_abs_formula.py", "known:profiling-backward-formula"),
    ("torchscript_profiling_plan_runs_svdvals_before_linear.py", "known:profiling-error-order"),
    ("torchscript_callees_plan_drops_a_dead_library_call.py", "known:dead-code"),
    ("torchscript_frozen_cast_cache_then_an_assert.py", "known:frozen-cast-cache"),
    ("torchscript_frozen_drops_a_dead_op_of_a_forked_callee.py", "known:dead-code"),
    ("torchscript_profiling_subgraph_detaches_a_cached_weight.py", "known:profiling-detached-cache"),
    ("torchscript_profiling_complex_gradient_of_a_real_input.py", "known:profiling-complex-grad"),
    ("torchscript_fork_backward_meets_autocasts_cat_first.py", "known:fork-grad-order"),
    ("torchscript_frozen_keeps_a_written_alias_weight.py", "known:frozen-constant-weights"),
    ("torchscript_dead_object_built_in_an_if.py", "known:dead-code"),
    ("torchscript_front_end_drops_a_callees_dead_if.py", "known:dead-code"),
    ("torchscript_plan_made_in_inference_mode.py", "known:inference-mode-plan"),
    ("torchscript_thread_without_autocast_meets_the_profiling_error_order.py",
     "known:profiling-plain-torchscript"),
    ("torchscript_thread_without_autocast_meets_the_order_of_a_plan_profiled_with_grad.py",
     "known:profiling-error-order"),
    ("torchscript_saved_profiling_subgraph_casts_a_cached_input_afresh.py",
     "known:profiling-detached-cache"),
    ("torchscript_frozen_plan_drops_a_cdist_of_an_unrolled_loop.py", "known:dead-code"),
    ("torchscript_frozen_saved_drops_a_weights_dead_op_before_a_raise.py", "known:dead-code"),
])
def test_torchscript_and_frozen_differences_recognized(name, kind):
    """A scope only in a helper nothing calls leaves plain TorchScript a
    reference; a callee's dead value kept by a caller's loop raises where
    the callee's own plan dropped it; a frozen model's constant weights,
    which eager's cast cache never serves; a fork's backward order where
    the direct calls differ by TorchScript's node names; a dead value of a
    callee in a program that forks, which is no backward error; autograd's
    out= check of the profiling plan before the op's own; the softmax
    formula again, in a program whose one scope encloses no op; a frozen
    model past a dead op of a callee with a dynamic scope, raising another
    class of error further on (runner)."""
    assert _run(name).kind == kind


class _RaisesOnly(torch.nn.Module):
    def forward(self, a: torch.Tensor) -> torch.Tensor:
        raise RuntimeError("only raises")


class _WritesThenCallsWhatRaises(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.sub = _RaisesOnly()

    def forward(self, x: torch.Tensor) -> List[torch.Tensor]:
        out = x.double() + 1.0
        torch.softmax(x, 1, out=out)  # eager: out's dtype error
        return [out, self.sub(x)]


def test_frozen_saved_drops_a_dead_out_write_is_torchscripts():
    """Plain TorchScript (no jitamp, no autocast): a frozen model raises an
    out= write's dtype error, as eager and the scripted model do; saved and
    loaded, it raises the submodule's error instead. Loading compiles the
    code again with the submodule inlined, whose raise ends the graph, and
    the dead code elimination that reads aliases drops the write, which
    nothing live reads (torchscript_frozen_saved_drops_an_out_write_before_a_callees_raise.py)."""
    x = torch.ones(2, 2)
    model = _WritesThenCallsWhatRaises().eval()
    out_dtype = "Expected out tensor to have dtype float, but got double"
    with pytest.raises(RuntimeError, match=out_dtype):
        model(x)
    frozen = torch.jit.freeze(oracle.script_without_jitamp(model))
    buffer = io.BytesIO()
    torch.jit.save(frozen, buffer)
    buffer.seek(0)
    loaded = torch.jit.load(buffer)
    for _ in range(2):  # the first call and the executor's plan
        with pytest.raises(RuntimeError, match=out_dtype):
            frozen(x)
        with pytest.raises(torch.jit.Error, match="only raises"):
            loaded(x)


@pytest.mark.skipif(not hasattr(torch._C, "_jit_pass_dce_graph"),
                    reason="this torch (2.4.1 among them) does not bind the dead code elimination "
                           "that reads aliases: the runner's alias-blind fallback keeps the write")
def test_frozen_saved_out_write_before_a_callees_raise_recognized():
    """Seed 125, index 1889: the frozen model saved and loaded drops an out=
    softmax before a submodule that only raises, whose error eager raises.
    The profiling executor made no plan at the first call, which differs:
    the runner eliminates dead code in the model's graph as every executor
    does (runner._frozen_graphs)."""
    result = _run("torchscript_frozen_saved_drops_an_out_write_before_a_callees_raise.py")
    assert result.kind == "known:dead-code", (result.kind, result.message)


@pytest.mark.parametrize("name", [
    "torchscript_softmax_formula_half_input_under_a_casting_region.py",  # seed 77112026, index 2718
    "torchscript_profiling_out_grad_where_eager_runs_on.py",  # seed 77112026, index 8814
    "torchscript_softmax_formula_outside_every_scope.py",  # seed 112902, index 46442
    "torchscript_softmax_formula_in_a_scope_under_a_region.py",  # seed 271127, index 21686
])
def test_plain_torchscript_raises_the_same_where_it_is_no_reference(name):
    """An error of the profiling plan that plain TorchScript raises at the
    same call, where eager does not, in programs for which plain TorchScript
    is no reference for values (a region that casts; scopes, which it runs
    with autocast off): runner._plain_raises_the_same."""
    assert _run(name).kind == "known:profiling-plain-torchscript"


def test_an_error_of_scopes_left_undone_is_not_plain_torchscripts(tmp_path):
    """runner._plain_raises_the_same: plain TorchScript runs scopes as if
    they were not there, so an error it shares with jitamp may be a scope
    jitamp failed to enter. Here a conv whose bias only the scope's casts
    make match raises so without the scope: eager with its scopes inert
    raises it too, and the runner keeps it a mismatch (a planted message,
    as jitamp would raise had it skipped the scope)."""
    from jitamp_fuzz import runner

    source = """
import torch
import torch.nn.functional as F
from torch import Tensor
def prog(x: Tensor, w: Tensor, b: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return F.conv2d(x, w, b)
KIND = 'function'
GRAD = False
OUTER = None
EXECUTOR = 'profiling'
def make_args(call):
    g = torch.Generator().manual_seed(call)
    return [torch.randn(1, 1, 4, 4, generator=g), torch.randn(1, 1, 3, 3, generator=g),
            torch.randn(1, generator=g).to(torch.bfloat16)]
def build():
    return prog
"""
    module = runner.load_source(source, str(tmp_path), "scope_left_undone")
    try:
        module.prog(*module.make_args(1))  # eager, with its scope: returns
        with runner.scripted_without_jitamp(source, str(tmp_path), "undone_plain") as (_, plain):
            builtin = torch._C._jit_set_autocast_mode(False)
            try:
                with pytest.raises(RuntimeError) as raised:  # what a scope left undone raises
                    plain(*module.make_args(1))
            finally:
                torch._C._jit_set_autocast_mode(builtin)
        message = f"call 1: scripted raised {raised.value!r}, eager returned"
        last_line = runner._scripted_error(message)[2]
        assert last_line.startswith("Input type (float) and bias type"), last_line
        assert not runner._DTYPE_ERROR.search(last_line)  # the dtype rule lets it through
        assert not runner._plain_raises_the_same(module.prog, module, source, str(tmp_path), "undone", message)
    finally:
        runner.unload(module)


def _first_errors(fn, make_args, calls=(1, 2, 3), *, grad_of=None):
    """The last line of each call's error (None where it returned); with
    `grad_of`, backward through the sum of the float tensors it picks."""
    errors = []
    for call in calls:
        try:
            out = fn(*make_args(call))
            if grad_of is not None:
                sum(t.float().sum() for t in grad_of(out)).backward()
            errors.append(None)
        except RuntimeError as error:
            errors.append(str(error).strip().splitlines()[-1])
    return errors


def test_softmax_formula_with_dtype_fails_plain_torchscript_without_autocast(tmp_path):
    """What 2718 shows, without autocast or jitamp: the profiling plan's
    formula of softmax with dtype=torch.float32 on a float16 input raises
    from the second call, where eager returns."""
    from jitamp_fuzz.runner import load_source, unload

    source = """
import torch
def f(x: torch.Tensor):
    return torch.softmax(torch.tanh(x), -1, dtype=torch.float32) * 2
"""
    module = load_source(source, str(tmp_path), "softmax_formula_plain")
    try:
        plain = oracle.script_without_jitamp(module.f)

        def args(call):
            return [torch.randn(4, 4).half().requires_grad_()]
        assert _first_errors(module.f, args, grad_of=lambda out: [out]) == [None] * 3
        errors = _first_errors(plain, args, grad_of=lambda out: [out])  # TorchScript's default executor
    finally:
        unload(module)
    assert errors[0] is None and errors[1] == errors[2] == "RuntimeError: expected scalar type Float but found Half"


def test_out_softmax_with_grad_fails_plain_torchscript_where_eager_runs_on(tmp_path):
    """What 8814 shows, without autocast or jitamp: once the profiling plan
    is optimized, an out= softmax into bmm's result raises autograd's out=
    error; eager's kernel runs."""
    from jitamp_fuzz.runner import load_source, unload

    source = """
from typing import List, Tuple
import torch
import torch.nn.functional as F
def f(x0: torch.Tensor, flag: bool):
    v5 = F.prelu(x0, x0[0])
    v9 = torch.bmm(v5.unsqueeze(0), x0.unsqueeze(0)).squeeze(0)
    if flag:
        return v9
    torch.softmax(v5, 1, out=v9)
    return x0
"""
    module = load_source(source, str(tmp_path), "out_grad_eager_runs_on")
    try:
        plain = oracle.script_without_jitamp(module.f)

        def args(call):
            x0 = torch.randn(4, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
            return [x0.requires_grad_(), call % 2 == 1]
        assert _first_errors(module.f, args, (1, 2, 3, 4)) == [None] * 4
        errors = _first_errors(plain, args, (1, 2, 3, 4))  # TorchScript's default executor
    finally:
        unload(module)
    out_grad = ("RuntimeError: aten::softmax(): functions with out=... arguments don't support automatic "
                "differentiation, but one of the arguments requires grad.")
    assert errors == [None, out_grad, None, out_grad]


def test_profiling_plan_raises_out_grad_before_the_out_dtype_check(tmp_path):
    """Plain TorchScript, no autocast: once the profiling executor has
    optimized (the other branch ran), bmm's result comes out of a
    differentiable subgraph and the out= softmax into it raises autograd's
    out= error, where eager's op raises its out dtype check (what the
    runner's known:profiling-out-grad recognizes)."""
    source = """
from typing import List, Tuple
import torch
def f(a: torch.Tensor, b: torch.Tensor, flag: bool):
    sink: List[torch.Tensor] = []
    if not flag:
        return a, sink
    v3 = torch.bmm(a.unsqueeze(0), b.unsqueeze(0)).squeeze(0); sink.append(v3)
    torch.softmax(b.double(), 1, out=v3)
    return a, sink
"""
    from jitamp_fuzz.runner import load_source, unload

    errors = {}
    module = load_source(source, str(tmp_path), "out_grad_plain")
    try:
        plain = oracle.script_without_jitamp(module.f)
        a, b = torch.randn(4, 4, requires_grad=True), torch.randn(4, 4, requires_grad=True)
        for call in (1, 2, 3):
            for side, fn in (("eager", module.f), ("plain", plain)):
                try:
                    fn(a, b, call != 2)
                except RuntimeError as error:
                    errors[side, call] = str(error).strip().splitlines()[-1]
    finally:
        unload(module)
    assert "Expected out tensor to have dtype double" in errors["eager", 3], errors
    assert "Expected out tensor to have dtype double" in errors["plain", 1], errors
    assert "functions with out=... arguments don't support automatic differentiation" in errors["plain", 3], errors


# Plain TorchScript (no jitamp, no autocast) showing each of the known kinds
# the runner recognizes by message alone (known_difference): the profiling
# executor's symbolic autodiff, from the plan's second call, and
# TorchScript's choice of overloads.

def _grads_per_call(fn, make_args, calls: int = 4) -> list:
    """Each call's input gradients, or its error's last line."""
    out = []
    for _ in range(calls):
        args = make_args()
        try:
            fn(*args).float().sum().backward()
            out.append([a.grad for a in args])
        except RuntimeError as exc:
            out.append(str(exc).strip().splitlines()[-1])
    return out


@pytest.fixture
def profiling_executor():
    previous = torch._C._jit_set_profiling_executor(True)
    yield
    torch._C._jit_set_profiling_executor(previous)


def _abs_of_complex(x: torch.Tensor) -> torch.Tensor:
    return torch.abs(x * 2.0) * 1.0


def test_profiling_backward_formula_is_torchscripts(profiling_executor):
    """known:profiling-backward-formula: abs's symbolic formula calls sign,
    which refuses complex tensors; eager's derivative uses sgn."""
    make = lambda: [torch.randn(4, dtype=torch.complex64).requires_grad_()]  # noqa: E731
    assert not isinstance(_grads_per_call(_abs_of_complex, make, 1)[0], str)
    plain = _grads_per_call(oracle.script_without_jitamp(_abs_of_complex), make)
    assert not isinstance(plain[0], str)
    assert all("torch.sign is not intended to support complex numbers" in r for r in plain[1:]), plain


def _relu_then_nan(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x * 1.0) * float("nan")


def test_profiling_nan_grad_is_torchscripts(profiling_executor):
    """known:profiling-nan-grad: relu's formula multiplies a NaN gradient by
    its mask (NaN), eager's threshold_backward selects 0."""
    make = lambda: [torch.tensor([-1.0, 2.0]).requires_grad_()]  # noqa: E731
    eager = _grads_per_call(_relu_then_nan, make, 1)[0][0]
    assert eager[0] == 0 and eager[1].isnan()
    plain = _grads_per_call(oracle.script_without_jitamp(_relu_then_nan), make)
    assert torch.equal(plain[0][0].nan_to_num(), eager.nan_to_num())
    assert all(r[0][0].isnan() for r in plain[1:]), plain


def _in_place_on_a_view_of_a_bmm(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    v = torch.bmm(x.unsqueeze(0), x.unsqueeze(0)).squeeze(0)
    v.add_(y)
    return v * 1.0


def test_profiling_view_of_leaf_is_torchscripts(profiling_executor):
    """known:profiling-view-of-leaf: an in-place op on a view of a
    differentiable subgraph's result raises "a view of a leaf Variable that
    requires grad" from the plan's second call; eager returns."""
    make = lambda: [torch.randn(4, 4).requires_grad_(), torch.randn(4, 4)]  # noqa: E731
    assert not isinstance(_grads_per_call(_in_place_on_a_view_of_a_bmm, make, 1)[0], str)
    plain = _grads_per_call(oracle.script_without_jitamp(_in_place_on_a_view_of_a_bmm), make)
    assert any(isinstance(r, str) and "a view of a leaf Variable that requires grad" in r for r in plain), plain


def _scalar_product(x: torch.Tensor) -> torch.Tensor:
    return x * 2.0


def test_autograd_node_name_is_torchscripts():
    """known:autograd-node-name: TorchScript picks mul.Scalar for `x * 2.0`
    (MulBackward1), eager mul.Tensor (MulBackward0): an in-place error names
    the node."""
    x = torch.randn(3, requires_grad=True)
    assert _scalar_product(x).grad_fn.name() == "MulBackward0"
    assert oracle.script_without_jitamp(_scalar_product)(x).grad_fn.name() == "MulBackward1"


def _exp_changed_in_place(x: torch.Tensor) -> torch.Tensor:
    y = (x * 2.0).exp()
    y.add_(1.0)
    return y * 1.0


def _softmax_with_dtype(x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    y = x * 2.0
    return torch.softmax(y, -1, dtype=torch.float32) * 1.0, y


def _backward_errors(fn, calls: int, after=None) -> List[str]:
    """The first line of each call's backward error ("" where it returned);
    `after(outputs)` runs between the call and backward."""
    errors = []
    for _ in range(calls):
        x = torch.randn(4, 4, requires_grad=True)
        try:
            out = fn(x)
            if after is not None:
                after(out)
            (out[0] if isinstance(out, tuple) else out).sum().backward()
            errors.append("")
        except RuntimeError as error:
            errors.append(str(error).splitlines()[0])
    return errors


# Autograd's names of the nodes: ExpBackward0 and DifferentiableGraphBackward
# on torch 2.4.1; Exp and DifferentiableGraph on 2.13 and 2.15.
_EXP_NODE = r"output 0 of Exp(Backward0)?, is at version"
_SUBGRAPH_NODE = r"of torch::jit::\(anonymous namespace\)::DifferentiableGraph(Backward)?, is at version"


def test_profiling_autograd_node_is_torchscripts(profiling_executor):
    """known:profiling-autograd-node: a tensor backward needs, changed in
    place, is named by eager as its op's output ("output 0 of Exp"); from
    the profiling plan's second call, as the differentiable subgraph's
    output. Plain TorchScript, no autocast."""
    eager = _backward_errors(_exp_changed_in_place, 1)
    assert re.search(_EXP_NODE, eager[0]), eager
    plain = _backward_errors(oracle.script_without_jitamp(_exp_changed_in_place), 3)
    assert re.search(_EXP_NODE, plain[0]), plain
    assert all(re.search(_SUBGRAPH_NODE, e) for e in plain[1:]), plain


def test_profiling_saved_by_formula_is_torchscripts(profiling_executor):
    """known:profiling-saved-by-formula: softmax's symbolic formula with a
    dtype saves its input (for `self.dtype`), eager's derivative only its
    result: the input changed in place after the call (no_grad) fails the
    plan's backward from its second call; eager's returns. Plain TorchScript,
    no autocast."""
    def change_input(out):
        with torch.no_grad():
            out[1].add_(1.0)
    assert _backward_errors(_softmax_with_dtype, 1, change_input) == [""]
    plain = _backward_errors(oracle.script_without_jitamp(_softmax_with_dtype), 3, change_input)
    assert plain[0] == "", plain
    assert all(re.search(_SUBGRAPH_NODE, e) for e in plain[1:]), plain


def _softmax_outside_a_scope(x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    v2 = torch.softmax(x.clamp(-1.0, 1.0), -1, dtype=torch.float32)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        v1 = x @ x
    return v2, v1


def test_profiling_softmax_formula_outside_every_scope_is_torchscripts(profiling_executor):
    """known:profiling-plain-torchscript (seed 112902, index 46442): a
    float16 input's softmax with dtype=float32, outside every scope, then a
    scope that casts a matmul. Eager's softmax.int casts first
    (ToCopyBackward0, then SoftmaxBackward0 of the float32 copy, whose
    `_softmax_backward_data` gets input_dtype float32). The profiling plan
    differentiates softmax.int as one op: its formula's
    `_softmax_backward_data(grad_output, result, dim, self.dtype)` gets the
    float16 input's dtype with a float32 gradient and result, for which the
    CPU kernel's output is float16 (the half-to-float case of CUDA's
    kernel): "expected scalar type Float but found Half" from the plan's
    second call. Plain TorchScript (no jitamp, its built-in autocast pass
    off), with eager's dtypes for all the softmax reads."""
    def make():
        return [torch.randn(4, 4, generator=torch.Generator().manual_seed(0)).half().requires_grad_()]

    def grad_of(out):
        return list(out)
    x = make()[0]
    v2, _ = _softmax_outside_a_scope(x)
    assert [type(n).__name__ for n in (v2.grad_fn, v2.grad_fn.next_functions[0][0])] == [
        "SoftmaxBackward0", "ToCopyBackward0"]
    assert _first_errors(_softmax_outside_a_scope, lambda call: make(), grad_of=grad_of) == [None] * 3
    half = "RuntimeError: expected scalar type Float but found Half"
    grad, result = torch.ones(4, 4), torch.softmax(torch.randn(4, 4), -1)
    assert torch._softmax_backward_data(grad, result, -1, torch.float32).dtype == torch.float32  # eager's
    with pytest.raises(RuntimeError, match=half.split(": ", 1)[1]):
        torch._softmax_backward_data(grad, result, -1, torch.float16)  # the formula's
    previous = torch._C._jit_set_autocast_mode(False)
    try:
        plain = oracle.script_without_jitamp(_softmax_outside_a_scope)
        errors = _first_errors(plain, lambda call: make(), grad_of=grad_of)
    finally:
        torch._C._jit_set_autocast_mode(previous)
    assert errors == [None, half, half], errors


def _half_softmax_outside_a_scope(x0: torch.Tensor):
    v2 = torch.softmax(x0.clamp(-1.0, 1.0), -1, dtype=torch.float32)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        v1 = x0 @ x0
    return v2, v1


def _half_softmax_method(x0: torch.Tensor):
    return x0.softmax(-1, dtype=torch.float32)


def _half_softmax_functional(x0: torch.Tensor):
    return torch.nn.functional.softmax(x0, -1, dtype=torch.float32)


def _softmax_of_a_scopes_matmul(x0: torch.Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        v1 = x0 @ x0
    return torch.softmax(v1.clamp(-1.0, 1.0), -1, dtype=torch.float32), v1


@pytest.mark.parametrize("fn, theirs", [
    (_half_softmax_outside_a_scope, True),
    (_half_softmax_method, True),
    (_half_softmax_functional, True),
    (_softmax_of_a_scopes_matmul, False),  # eager gives its softmax bfloat16
])
def test_a_formula_is_tried_alone_on_the_dtypes_eager_gives_its_op(fn, theirs, tmp_path, profiling_executor):
    """runner._formula_raises_on_eagers_inputs: the op whose formula raised
    (float16 seen), called alone in plain TorchScript on the dtypes eager
    gives it (as a torch function, a Tensor method or a functional), raises
    the same at the same call only where eager gives it float16: a
    softmax of a scope's bfloat16 matmul returns alone (the CPU kernel
    takes a bfloat16 input_dtype with a float32 gradient), so a plan that
    fed it float16 would stay a mismatch."""
    from jitamp_fuzz import runner

    message = ("call 2: scripted raised RuntimeError('Traceback of TorchScript (most recent call last):\\n"
               "  File \"<string>\", line 83, in <backward op>\\n"
               "            result = torch.softmax(self, dim, dtype)\\n"
               "            def backward(grad_output):\\n"
               "                grad_self = torch._softmax_backward_data(grad_output, result, dim, self.dtype)\\n"
               "RuntimeError: expected scalar type Float but found Half\\n'), eager returned")
    module = types.SimpleNamespace(GRAD=True, OUTER=None, make_args=lambda call: [
        torch.randn(4, 4, generator=torch.Generator().manual_seed(call)).half()])
    assert runner._formula_raises_on_eagers_inputs(fn, module, str(tmp_path), "alone", message) is theirs


def _matmul_in_a_subgraph(w: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return torch.matmul(w, v).unsqueeze(1) * 1.0


def test_profiling_subgraph_detaches_inputs_from_the_cast_cache_is_torchscripts(profiling_executor):
    """known:profiling-detached-cache: plain TorchScript (no jitamp, its
    built-in autocast pass off), called in eager regions. Where a bfloat16
    op has put a weight's cast in eager's cache, eager's float16 matmul of
    the weight meets that entry and raises; the profiling plan's
    differentiable subgraph runs the matmul on detached inputs, which the
    cache never serves, and returns float16."""
    previous = torch._C._jit_set_autocast_mode(False)
    try:
        scripted = oracle.script_without_jitamp(_matmul_in_a_subgraph)
        w = torch.nn.Parameter(torch.randn(4, 4))
        results = []
        for fn in (_matmul_in_a_subgraph, _matmul_in_a_subgraph, scripted, scripted, scripted, scripted):
            cached = len(results) % 2 == 1
            try:
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    if cached:
                        torch.nn.functional.linear(w, w)  # caches w's bfloat16 cast
                    with torch.autocast("cpu", dtype=torch.float16):
                        results.append(fn(w, w[0]).dtype)
            except RuntimeError as error:
                results.append(str(error).splitlines()[-1])
    finally:
        torch._C._jit_set_autocast_mode(previous)
    # (the dtype error's wording: "must have the same dtype" on torch 2.13,
    # "expected scalar type BFloat16 but found Half" on 2.4.1)
    assert results[0] == torch.float16 and re.search(
        "must have the same dtype|expected scalar type BFloat16 but found Half", results[1]), results
    # the plan from the second call on: a subgraph, fed detached inputs
    assert results[3] == torch.float16 and results[5] == torch.float16, results
