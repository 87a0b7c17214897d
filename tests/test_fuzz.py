"""The differential fuzzer (tools/jitamp_fuzz) in CI: a fixed-seed batch of
generated programs, each scripted with jitamp and compared with eager by the
oracle's rules; and tests of the generator and shrinker themselves.

A failing program is shrunk and written as a reproducer (to $JITAMP_FUZZ_OUT
if set, else the test's tmp_path); the failure shows its path and the shrunk
program. Long runs: `python tools/jitamp_fuzz --count 10000 --jobs 2 --out DIR`.
"""
import ast
import collections
import os
import re
import tempfile
import textwrap
import types

import pytest
import torch

from jitamp_fuzz import generator
from jitamp_fuzz.generator import Line, generate
from jitamp_fuzz.runner import Result, repro_source, run_source
from jitamp_fuzz.shrink import shrink, shrink_failure

CI_SEED = 20261123
CI_COUNT = 240
CHUNK = 40


@pytest.fixture(scope="module")
def workdir():
    with tempfile.TemporaryDirectory(prefix="jitamp_fuzz_") as d:
        yield d


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _report(index: int, result: Result, workdir: str, out: str) -> str:
    program = generate(CI_SEED, index)
    if result.kind != "reject":
        program, _ = shrink_failure(program, result.kind, workdir, budget_s=60)
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, f"repro_{CI_SEED}_{index}.py")
    with open(path, "w") as f:
        f.write(repro_source(program.render()))
    return (f"program {CI_SEED}/{index}: {result.kind}\n{result.message[:2000]}\n"
            f"reproducer: {path}\nshrunk program:\n{program.render()}")


@pytest.mark.parametrize("start", range(0, CI_COUNT, CHUNK), ids=lambda s: f"{s}-{s + CHUNK - 1}")
def test_fuzz_batch(start, workdir, tmp_path):
    out = os.environ.get("JITAMP_FUZZ_OUT") or str(tmp_path)
    for index in range(start, start + CHUNK):
        result = run_source(generate(CI_SEED, index).render(), workdir)
        # "reject" is a generator bug (the program does not script even
        # without jitamp): it fails the batch too.
        if result.kind != "ok" and not result.kind.startswith("known:"):
            pytest.fail(_report(index, result, workdir, out), pytrace=False)


EXPORT_COUNT = 120


@pytest.fixture
def exports():
    """jitamp.export's torch (test_export.py checks the error elsewhere)."""
    from jitamp import _export

    try:
        _export._check_torch()
    except RuntimeError as error:
        pytest.skip(f"no export mode on torch {torch.__version__}: {error}")


@pytest.mark.parametrize("start", range(0, EXPORT_COUNT, CHUNK), ids=lambda s: f"export-{s}-{s + CHUNK - 1}")
def test_fuzz_export_batch(start, workdir, exports):
    """Export mode (tools/jitamp_fuzz/export.py): every program jitamp.export
    accepts computes as eager; a refusal is an ExportError whose reason
    the runner names (never another exception)."""
    from jitamp_fuzz.export import run_export_source

    kinds = collections.Counter()
    for index in range(start, start + CHUNK):
        result = run_export_source(generate(CI_SEED, index).render(), workdir)
        kinds[result.kind.split(":")[0]] += 1
        assert result.kind == "ok" or result.kind.startswith("refused:"), (
            f"program {CI_SEED}/{index}: {result.kind}\n{result.message[:3000]}")
    assert kinds["ok"] > 0, kinds


def test_fuzz_export_mode_reports_a_planted_difference(workdir, exports):
    """The export mode's oracle finds a difference: the program's graph is
    TorchScript's, where torch.jit.is_scripting() is True, so its export
    appends what eager does not."""
    from jitamp_fuzz import export as export_mode

    source = textwrap.dedent("""\
        from typing import List
        import torch
        from torch import Tensor


        def prog(x0: Tensor) -> List[Tensor]:
            sink: List[Tensor] = []
            with torch.autocast("cpu", dtype=torch.bfloat16):
                sink.append(torch.mm(x0, x0))
                {planted}
            return sink


        KIND = 'function'
        GRAD = False
        OUTER = None
        SAVE = False
        RUNTIME_JITAMP = False
        ALTERNATE = False
        EXECUTOR = 'simple'
        ADD_AUTOCAST = None
        THREADS = None


        def make_args(call: int) -> list:
            return [torch.randn(4, 4, generator=torch.Generator().manual_seed(call))]


        def build():
            return prog
        """)
    assert export_mode.run_export_source(source.format(planted="pass"), workdir).kind == "ok"
    planted = source.format(planted=SCRIPTED_ONLY.replace("\n        ", "\n            "))
    assert export_mode.run_export_source(planted, workdir).kind.startswith("mismatch:")


# --- the generator ---------------------------------------------------------

def test_generation_is_deterministic():
    for index in (0, 7, 123):
        assert generate(5, index).render() == generate(5, index).render()
    assert generate(5, 1).render() != generate(5, 2).render()


def test_generated_source_parses_and_has_a_harness():
    for index in range(50):
        tree = ast.parse(generate(3, index).render())
        names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        assert {"make_args", "build"} <= names
        assert "prog" in names or "Prog" in names


def test_op_templates_name_their_effective_cpu_policy():
    """Every template's policy is the installed torch's effective CPU policy
    of its op (so the generator covers every policy kind it claims)."""
    from jitamp.passes.policy import policy_table
    effective = {row.op: row.effective_cpu for row in policy_table()}
    for op in generator.OPS + generator.INPLACE:
        assert effective.get(op.name, "none") == op.policy, op
    kinds = {op.policy for op in generator.OPS}
    assert {"lower_precision_fp", "fp32", "promote", "none"} <= kinds


def test_generator_covers_its_features():
    features = set()
    for index in range(300):
        features |= generate(11, index).features
    for wanted in ("module", "grad", "no grad", "control:if", "control:for", "control:while",
                   "control:break/continue", "control:early return", "autocast:as name",
                   "autocast:re-entry", "autocast:prebuilt object", "autocast:conditional object",
                   "call:fork", "call:ignore", "call:jit.script callee", "call:submodule",
                   "helper:autocast-decorated", "dtype=argument", "dtype=computed", "enabled=argument",
                   "enabled=computed", "cache_enabled", "device=cuda", "spelling=torch.cpu.amp.autocast",
                   "spelling=torch.cuda.amp.autocast", "spelling=torch.amp.autocast",
                   "Tensor?=optional variable", "input:bf16", "input:fp16", "input:f64", "input:i64",
                   "op:aten::mm.out", "op:aten::add_", "control:exits around scopes",
                   "outer:no_grad", "outer:inference_mode", "executor:profiling", "executor:simple",
                   "input:c64", "value:tuple", "value:dict", "value:class", "value:class method", "threads",
                   "op:aten::lstm", "op:aten::linalg_eigh"):
        if wanted == "autocast:as name" and generator.EAGER_ENTER_RETURNS_NONE:
            continue  # left out before torch 2.5 (fuzz finding 5)
        assert wanted in features, wanted


# --- the runner and the shrinker ----------------------------------------------

def _function_program(seed: int, planted: str):
    """The first generated function program that runs in eager (an error
    would hide the planted statement) without early exits (which could
    skip it), with `planted` (a statement, 4-space indented continuation
    lines) as the entry's second statement."""
    with tempfile.TemporaryDirectory() as workdir:
        for index in range(50):
            program = generate(seed, index)
            if (program.harness["KIND"] != "function" or program.harness["GRAD"]  # a backward error too
                    or "control:exits around scopes" in program.features):
                continue
            result = run_source(program.render(), workdir)
            if result.kind != "ok" or result.eager_raised:
                continue
            prog = next(d for d in program.defs if d.name == "prog")
            prog.body.insert(1, Line(planted, fixed=True))
            return program
    raise AssertionError("no function program")


SCRIPTED_ONLY = "if torch.jit.is_scripting():\n        sink.append(x0.double())"


def test_runner_reports_a_planted_difference(workdir):
    """A program whose scripted side differs from eager (torch.jit.is_scripting
    is True only in TorchScript) must be reported, with its kind."""
    program = _function_program(CI_SEED, SCRIPTED_ONLY)
    result = run_source(program.render(), workdir)
    assert result.kind.startswith("mismatch:"), result


def test_runner_reports_a_difference_only_a_second_thread_meets(workdir):
    """THREADS programs are also called from two threads at once, the second
    inside an autocast region where the first (OUTER) has none: a scripted
    side that differs only where the caller's autocast is on (it raises
    there) is reported from that thread."""
    planted = ("if torch.jit.is_scripting() and torch.is_autocast_cpu_enabled():\n"
               "        raise ValueError('planted')")
    with tempfile.TemporaryDirectory() as tmp:
        for index in range(3000):
            program = generate(CI_SEED, index)
            h = program.harness
            if (h["KIND"] != "function" or h["OUTER"] is not None or not h["THREADS"]
                    or "control:exits around scopes" in program.features):
                continue
            result = run_source(program.render(), tmp)
            if result.kind != "ok" or result.eager_raised:
                continue
            prog = next(d for d in program.defs if d.name == "prog")
            prog.body.insert(1, Line(planted, fixed=True))
            result = run_source(program.render(), tmp)
            assert result.kind.startswith("threads-mismatch:"), result
            assert "in thread 1 of 2" in result.message
            return
    raise AssertionError("no THREADS function program without a region")


def test_device_programs_put_every_tensor_on_the_device(workdir):
    """`generate(..., device=...)` (the GPU's batches, `--device cuda`):
    inputs, optional inputs and parameters move to DEVICE, tensors made
    inside the program take their operand's device, scopes and eager regions
    are mostly the device's; CPU programs (device None) name no device. Run
    here with device "cpu", the device-aware programs give eager's results."""
    cuda = [generate(CI_SEED, index, device="cuda") for index in range(200)]
    sources = [p.render() for p in cuda]
    assert all("DEVICE = 'cuda'" in s for s in sources)
    assert "DEVICE" not in generate(CI_SEED, 0).render()
    for source in sources:
        for line in source.splitlines():
            if re.search(r"torch\.(tensor|eye|zeros)\(", line):
                assert ".device)" in line, line
            if re.match(r"    x\d+ = torch\.rand", line):
                assert line.endswith(".to(DEVICE)"), line
    assert sum("return Prog().to(DEVICE)" in s for s in sources) == sum(p.harness["KIND"] == "module" for p in cuda) > 0
    # in-place and out= ops read clones (CUDA's cat does not refuse an out=
    # that overlaps an input: seed 281126, index 32), and the replicate pad
    # is the ATen op (eager's F.pad decomposes it under deterministic
    # algorithms, TorchScript's does not: index 64)
    in_place = [line for s in sources for line in s.splitlines()
                if re.search(r"out=|\.(add|mul|clamp|addmm|copy)_\(", line) and "sink" not in line.split("=")[0]]
    assert in_place and all(".clone()" in line or re.search(r"\.(mul|clamp)_\(", line) for line in in_place), in_place
    assert not any("mode='replicate'" in s for s in sources)
    assert any("torch.ops.aten.replication_pad2d(" in s for s in sources)
    scopes = collections.Counter(device for s in sources
                                 for device in re.findall(r"autocast\('(cpu|cuda)'|torch\.(cpu|cuda)\.amp", s))
    cuda_scopes = scopes[("cuda", "")] + scopes[("", "cuda")]
    assert cuda_scopes > 4 * (scopes[("cpu", "")] + scopes[("", "cpu")]), scopes
    assert all(p.harness["OUTER"] is None or isinstance(p.harness["OUTER"], str)
               or p.harness["OUTER"][0] == "cuda" for p in cuda)
    # a uniform program's scopes on the device keep its dtype (CUDA's
    # default is float16, CPU's bfloat16): two threads share eager's cast
    # cache (seed 112950, index 2801 at 8eba56a mixed them)
    for index, source in enumerate(sources):
        drawn = generator.Generator(CI_SEED, index, device="cuda")
        assert drawn.generate().render() == source
        if not drawn.mixed:
            body = source.split("# --- harness")[0]
            lower = generator.LOWER[drawn.lower]
            scopes = re.findall(r"torch\.cuda\.amp\.autocast\([^)]*|torch\.(?:amp\.)?autocast\((?:device_type=)?'cuda'[^)]*",
                                body)
            for scope in scopes:
                named = re.findall(r"dtype=([\w.]+)", scope)
                assert named in ([lower], ["torch.float32"], ["dt"]) or (
                    not named and lower == "torch.float16"), (scope, lower)
    kinds = collections.Counter(run_source(generate(CI_SEED, index, device="cpu").render(), workdir).kind
                                for index in range(40))
    assert set(kinds) <= {"ok"} | {k for k in kinds if k.startswith("known:")}, kinds


def test_eager_that_varies_is_no_reference():
    """On a device (a GPU), a value or gradient difference where eager's own
    results vary (a kernel without a deterministic implementation, whose
    alert torch.use_deterministic_algorithms(True) raises; or eager runs
    that differ) is known:eager-nondeterministic. Never on CPU."""
    from jitamp_fuzz import runner

    def harness(fn, device):
        return types.SimpleNamespace(
            DEVICE=device, OUTER=None, GRAD=False, fn=fn,
            make_args=lambda call: [torch.ones(4, 4)])

    def alerting(x):
        if torch.are_deterministic_algorithms_enabled():
            raise RuntimeError("planted_backward_cuda does not have a deterministic implementation")
        return x * 2

    def varying(x):
        return x + torch.rand(4, 4)

    def steady(x):
        return x * 2

    was = torch.are_deterministic_algorithms_enabled()
    assert runner._eager_varies(alerting, harness(alerting, "cuda"))
    assert torch.are_deterministic_algorithms_enabled() == was
    assert runner._eager_varies(varying, harness(varying, "cuda"))
    assert not runner._eager_varies(steady, harness(steady, "cuda"))
    assert not runner._eager_varies(varying, harness(varying, None))
    assert not runner._eager_varies(varying, harness(varying, "cpu"))


def test_runner_reports_a_generator_reject(workdir):
    program = _function_program(CI_SEED, "q = undefined_name")
    assert run_source(program.render(), workdir).kind == "reject"


def test_shrinker_with_a_planted_failure():
    """The 'failure' is a marker op in the program: the shrinker must keep it
    and remove nearly everything else."""
    program = None
    for index in range(100):
        p = generate(9, index)
        if "torch.cdist(" in p.render() and len(p.render().splitlines()) > 60:
            program = p
            break
    assert program is not None

    def still_fails(cand):
        src = cand.render()
        return "torch.cdist(" in src and compile(src, "<cand>", "exec") is not None

    small, tries = shrink(program, still_fails, budget_s=60)
    assert tries > 0
    assert still_fails(small)
    before = len(program.render().splitlines())
    after = len(small.render().splitlines())
    assert after < before
    # only the marker's statement (and the scaffolding) is left in the bodies
    statements = [n for d in small.defs for n in d.body
                  if not (isinstance(n, Line) and n.text.startswith("sink: List"))]
    assert len(statements) <= 2, small.render()


def test_shrinker_keeps_a_real_failure_kind(workdir):
    """Shrinking a planted scripted-only difference keeps it a mismatch."""
    program = _function_program(CI_SEED + 1, SCRIPTED_ONLY)
    kind = run_source(program.render(), workdir).kind
    assert kind.startswith("mismatch:")
    small, _ = shrink_failure(program, kind, workdir, budget_s=60)
    assert run_source(small.render(), workdir).kind == kind
    assert len(small.render()) < len(program.render())
    assert "is_scripting" in small.render()


def test_eager_side_gives_a_scripted_callees_raise_its_python_class():
    """Eager code calling a `@torch.jit.script` callee that raises gets
    torch.jit.Error; the runner's eager side gives it the class a Python
    callee would raise (jitamp's raises where eager binds `as` names to None
    on torch < 2.5 are such raises)."""
    from jitamp_fuzz.runner import _unwrapping_callee_errors

    @torch.jit.script
    def raises(x: torch.Tensor) -> torch.Tensor:
        raise TypeError("the message")

    with pytest.raises(torch.jit.Error):
        raises(torch.ones(1))
    with pytest.raises(TypeError, match="^the message$"):
        _unwrapping_callee_errors(raises)(torch.ones(1))


# The oracle's messages (shortened) of differences the profiling executor
# makes in plain TorchScript too, each first seen in a fuzz run (the
# comments name it), and of one it must not excuse.
_OUT_GRAD = ("call 2: scripted raised RuntimeError(\"aten::softmax(): functions with out=... arguments "
             "don't support automatic differentiation, but one of the arguments requires grad.\"), "
             "eager returned")
_FORMULA_BEFORE_EAGERS_ERROR = (
    "call 2: scripted raised builtins.NotImplementedError, eager builtins.RuntimeError\n"
    "eager raised RuntimeError('one of the variables needed for gradient computation has been "
    "modified by an inplace operation: [torch.FloatTensor [4, 4]], which is output 0 of Softmax, "
    "is at version 1; expected version 0 instead.')\n"
    "scripted raised NotImplementedError('Traceback of TorchScript (most recent call last):\\n"
    "  File \"<string>\", line 183, in <backward op>\\n    return grad_output * self.sign()\\n"
    "RuntimeError: Unlike NumPy, torch.sign is not intended to support complex numbers.')")
_SAVED_VIEW = ("call 2: scripted raised RuntimeError('one of the variables needed for gradient "
               "computation has been modified by an inplace operation: [torch.FloatTensor [2, 4]], "
               "which is output 0 of AsStrided, is at version 1; expected version 0 instead.'), "
               "eager returned")
_SAVED_VIEW_BOTH_RAISE = (
    "call 2: messages differ\n"
    "eager raised RuntimeError('one of the variables needed for gradient computation has been "
    "modified by an inplace operation: [torch.FloatTensor [4, 4]], which is output 0 of Clamp1, "
    "is at version 2; expected version 1 instead.')\n"
    "scripted raised RuntimeError('one of the variables needed for gradient computation has been "
    "modified by an inplace operation: [torch.FloatTensor [2, 4]], which is output 0 of AsStrided, "
    "is at version 2; expected version 1 instead.')")
_SUBGRAPH_NODE_ON_TORCH_2_4 = (
    "call 2: messages differ\n"
    "eager raised RuntimeError('one of the variables needed for gradient computation has been "
    "modified by an inplace operation: [torch.FloatTensor [4, 4]], which is output 0 of "
    "ReluBackward0, is at version 1; expected version 0 instead.')\n"
    "scripted raised RuntimeError('one of the variables needed for gradient computation has been "
    "modified by an inplace operation: [torch.FloatTensor [4, 4]], which is output 1 of "
    "torch::jit::(anonymous namespace)::DifferentiableGraphBackward, is at version 1; expected "
    "version 0 instead.')")
_DTYPE_IN_FORMULA = (
    "call 2: scripted raised builtins.RuntimeError, eager builtins.RuntimeError\n"
    "eager raised RuntimeError('one of the variables needed for gradient computation has been "
    "modified by an inplace operation')\n"
    "scripted raised RuntimeError('  File \"<string>\", line 9, in <backward op>\\n"
    "RuntimeError: expected scalar type Float but found BFloat16')")


@pytest.mark.parametrize("message, kind", [
    (_OUT_GRAD, "known:profiling-out-grad"),  # seed 1138, index 1604
    (_FORMULA_BEFORE_EAGERS_ERROR, "known:profiling-backward-formula"),  # seed 1138, index 4116
    (_SAVED_VIEW, "known:profiling-saved-by-formula"),  # torch 2.15: seed 215, index 675
    (_SAVED_VIEW_BOTH_RAISE, "known:profiling-saved-by-formula"),  # seed 1141, index 6923
    (_SAVED_VIEW_BOTH_RAISE.replace("of Clamp1", "of ClampBackward1").replace(
        "of AsStrided", "of AsStridedBackward0"), "known:profiling-saved-by-formula"),  # torch 2.4.1
    # ... but not where eager's error names the view too: a plain mismatch
    (_SAVED_VIEW_BOTH_RAISE.replace("output 0 of Clamp1", "output 0 of AsStrided"), None),
    (_SUBGRAPH_NODE_ON_TORCH_2_4, "known:profiling-autograd-node"),  # torch 2.4.1: seed 241, index 783
    (_DTYPE_IN_FORMULA, None),  # what jitamp's autodiff boundaries exist to prevent
], ids=["out_grad", "formula_before_eagers_error", "saved_view", "saved_view_both_raise",
        "saved_view_both_raise_torch_2_4",
        "saved_view_named_by_eager_too", "subgraph_node_on_torch_2_4",
        "dtype_error_in_formula"])
def test_known_profiling_differences(message, kind):
    from jitamp_fuzz.runner import known_difference
    assert known_difference(message, profiling=True) == kind
    assert known_difference(message, profiling=False) is None


def test_gradient_tolerance_of_the_largest_magnitude():
    """A bfloat16 sum whose terms cancel (seed 215, index 4581, torch 2.15:
    4.0 off on -28.4, in a gradient whose largest element is 26793) is
    within atol_of_max; a gradient off by a tenth of that largest element
    is not."""
    from jitamp.testing import assert_same
    eager = torch.tensor([26793.125, -28.4131])
    assert_same(eager, torch.tensor([26857.125, -32.4131]), exact=False, rtol=0.1, atol=0.25,
                atol_of_max=2**-5)
    with pytest.raises(AssertionError):
        assert_same(eager, torch.tensor([26793.125, -2708.0]), exact=False, rtol=0.1, atol=0.25,
                    atol_of_max=2**-5)
    with pytest.raises(AssertionError):  # without it, the cancelled sum fails
        assert_same(eager, torch.tensor([26857.125, -32.4131]), exact=False, rtol=0.1, atol=0.25)


FUZZING_DOCS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "fuzzing.md")


def test_the_docs_name_every_option_and_known_outcome():
    """docs/fuzzing.md lists every option of `python tools/jitamp_fuzz --help` and every
    "known:" outcome the runner reports."""
    import argparse
    import re

    from jitamp_fuzz import runner
    from jitamp_fuzz.cli import parser

    with open(FUZZING_DOCS) as f:
        docs = f.read()
    options = [action.option_strings[-1] for action in parser()._actions
               if action.option_strings and action.help not in (argparse.SUPPRESS, None)
               and not isinstance(action, argparse._HelpAction)]
    assert "--save-share" in options
    assert [option for option in options if f"| `{option}" not in docs] == []
    with open(runner.__file__) as f:
        kinds = set(re.findall(r'"(known:[a-z-]+)"', f.read()))
    assert "known:dead-code" in kinds
    assert sorted(kind for kind in kinds if f"`{kind}`" not in docs) == []


def test_the_command_line_runs_from_any_folder(tmp_path):
    """`python tools/jitamp_fuzz ARGS` (docs/fuzzing.md), from another
    working directory: one program, and a batch in a worker process."""
    import subprocess
    import sys

    fuzzer = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools", "jitamp_fuzz")
    for args, last in ((["--seed", "1", "--index", "0"], "seed 1 index 0: ok"),
                       (["--seed", "1", "--count", "2", "--jobs", "1"], None)):
        done = subprocess.run([sys.executable, fuzzer, *args], capture_output=True, text=True,
                              cwd=tmp_path, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        if last is not None:
            assert done.stdout.splitlines()[-1] == last, done.stdout
        else:
            assert done.stdout.startswith("programs: 2 in "), done.stdout

