"""The jitamp command line: dumps, diffs, errors, convert."""
import io
import os
import subprocess
import sys
import unittest
from contextlib import redirect_stderr, redirect_stdout

import expecttest
import pytest
import torch

from jitamp.cli import main
from oracle import torchscript_deprecation_ignored

PROGRAMS = os.path.join(os.path.dirname(__file__), "cli_inputs", "programs.py")


def run(*args):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(list(args))
    return status, out.getvalue(), err.getvalue()


class TestDiffSnapshots(expecttest.TestCase):
    def test_scoped_mm(self):
        status, out, _ = run("dump", f"{PROGRAMS}:scoped_mm", "--diff")
        assert status == 0
        self.assertExpectedInline(out, """\
--- scoped_mm (before)
+++ scoped_mm (after jitamp)
@@ -1,12 +1,17 @@
 graph(%x.1 : Tensor,
       %y.1 : Tensor):
+  %11 : str = prim::Constant[value="cpu,cuda"]()
   %2 : NoneType = prim::Constant()
   %3 : bool = prim::Constant[value=1]()
   %4 : int = prim::Constant[value=15]()
   %5 : str = prim::Constant[value="cpu"]()
   %6 : __torch__.torch.amp.autocast_mode.autocast = prim::CreateObject()
   %7 : NoneType = prim::CallMethod[name="__init__"](%6, %5, %4, %3, %2)
-  %8 : __torch__.torch.amp.autocast_mode.autocast = prim::Enter(%6)
-  %z.1 : Tensor = aten::mm(%x.1, %y.1)
-  %10 : Tensor = prim::Exit(%6)
+  %cache_enabled_needs_import_jitamp : bool = jitamp::autocast_cache_enabled(%2)
+   = prim::SetAttr[name="_jitamp_cache_enabled"](%6, %cache_enabled_needs_import_jitamp)
+  %12 : __torch__.torch.classes.jitamp.AutocastGuard, %13 : int = jitamp::autocast_enter(%6)
+  %14 : Tensor = jitamp::autocast_to_fp16(%y.1, %11, %13)
+  %15 : Tensor = jitamp::autocast_to_fp16(%x.1, %11, %13)
+  %z.1 : Tensor = aten::mm(%15, %14)
+   = jitamp::autocast_exit(%12)
   return (%z.1)
""")

    def test_nested_scopes(self):
        status, out, _ = run("dump", f"{PROGRAMS}:nested_scopes", "--diff")
        assert status == 0
        self.assertExpectedInline(out, """\
--- nested_scopes (before)
+++ nested_scopes (after jitamp)
@@ -1,5 +1,7 @@
 graph(%x.1 : Tensor,
       %flag.1 : bool):
+  %18 : str = prim::Constant[value="cpu"]()
+  %19 : str = prim::Constant[value="cpu,cuda"]()
   %2 : int = prim::Constant[value=0]()
   %3 : NoneType = prim::Constant()
   %4 : bool = prim::Constant[value=1]()
@@ -7,13 +9,20 @@
   %6 : str = prim::Constant[value="cpu"]()
   %7 : __torch__.torch.amp.autocast_mode.autocast = prim::CreateObject()
   %8 : NoneType = prim::CallMethod[name="__init__"](%7, %6, %5, %4, %3)
-  %9 : __torch__.torch.amp.autocast_mode.autocast = prim::Enter(%7)
-  %a.1 : Tensor = aten::mm(%x.1, %x.1)
+  %cache_enabled_needs_import_jitamp.1 : bool = jitamp::autocast_cache_enabled(%3)
+   = prim::SetAttr[name="_jitamp_cache_enabled"](%7, %cache_enabled_needs_import_jitamp.1)
+  %20 : __torch__.torch.classes.jitamp.AutocastGuard, %21 : int = jitamp::autocast_enter(%7)
+  %22 : Tensor = jitamp::autocast_to_fp16(%x.1, %19, %21)
+  %23 : Tensor = jitamp::autocast_to_fp16(%x.1, %19, %21)
+  %a.1 : Tensor = aten::mm(%23, %22)
   %11 : __torch__.torch.amp.autocast_mode.autocast = prim::CreateObject()
   %12 : NoneType = prim::CallMethod[name="__init__"](%11, %6, %3, %flag.1, %3)
-  %13 : __torch__.torch.amp.autocast_mode.autocast = prim::Enter(%11)
+  %cache_enabled_needs_import_jitamp : bool = jitamp::autocast_cache_enabled(%3)
+   = prim::SetAttr[name="_jitamp_cache_enabled"](%11, %cache_enabled_needs_import_jitamp)
+  %24 : __torch__.torch.classes.jitamp.AutocastGuard, %25 : int = jitamp::autocast_enter(%11)
   %14 : Tensor[] = prim::ListConstruct(%a.1, %x.1)
-  %b.1 : Tensor = aten::cat(%14, %2)
-  %16 : Tensor = prim::Exit(%11)
-  %17 : Tensor = prim::Exit(%7)
+  %26 : Tensor[] = jitamp::autocast_promote(%14, %18, %25)
+  %b.1 : Tensor = aten::cat(%26, %2)
+   = jitamp::autocast_exit(%24)
+   = jitamp::autocast_exit(%20)
   return (%b.1)
""")

    # --inline brings in torch's own scripted autocast.__init__, whose code
    # (and so this snapshot) differs before torch 2.13; the same on 2.13.0,
    # 2.14.1 and 2.15.0. The snapshots above hold on every version.
    @unittest.skipIf(
        tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2]) < (2, 13),
        "the snapshot inlines torch's own autocast.__init__, which differs before torch 2.13",
    )
    def test_module(self):
        status, out, _ = run("dump", f"{PROGRAMS}:ScopedLinear", "--diff", "--inline")
        assert status == 0
        self.assertExpectedInline(out, """\
--- forward (before)
+++ forward (after jitamp)
@@ -17,10 +17,17 @@
    = prim::SetAttr[name="fast_dtype"](%6, %9)
    = prim::SetAttr[name="_enabled"](%6, %3)
    = prim::SetAttr[name="device"](%6, %5)
-  %12 : __torch__.torch.amp.autocast_mode.autocast = prim::Enter(%6)
+  %cache_enabled_needs_import_jitamp : bool = jitamp::autocast_cache_enabled(%2)
+   = prim::SetAttr[name="_jitamp_cache_enabled"](%6, %cache_enabled_needs_import_jitamp)
+  %18 : __torch__.torch.classes.jitamp.AutocastGuard, %19 : int = jitamp::autocast_enter(%6)
   %linear : __torch__.torch.nn.modules.linear.Linear = prim::GetAttr[name="linear"](%self)
+  %20 : str = prim::Constant[value="cpu,cuda"]()
+  %caller_region_needs_import_jitamp : int = jitamp::autocast_caller_region()
   %weight : Tensor = prim::GetAttr[name="weight"](%linear)
   %bias : Tensor = prim::GetAttr[name="bias"](%linear)
-  %y.1 : Tensor = aten::linear(%x.1, %weight, %bias)
-  %17 : Tensor = prim::Exit(%6)
+  %21 : Tensor = jitamp::autocast_to_fp16(%bias, %20, %caller_region_needs_import_jitamp)
+  %22 : Tensor = jitamp::autocast_to_fp16(%weight, %20, %caller_region_needs_import_jitamp)
+  %23 : Tensor = jitamp::autocast_to_fp16(%x.1, %20, %caller_region_needs_import_jitamp)
+  %y.1 : Tensor = aten::linear(%23, %22, %21)
+   = jitamp::autocast_exit(%18)
   return (%y.1)
""")


def test_dump_function_module_factory_and_saved(tmp_path):
    for target in ("scoped_mm", "ScopedLinear", "make_linear"):
        status, out, err = run("dump", f"{PROGRAMS}:{target}")
        assert status == 0, err
        assert "jitamp::autocast_enter" in out and "prim::Enter" not in out
        assert "# " not in out, "no source comments without --source"
    status, out, _ = run("dump", f"{PROGRAMS}:scoped_mm", "--source")
    assert "programs.py" in out
    status, out, _ = run("dump", f"{PROGRAMS}:scoped_mm", "--before")
    assert "prim::Enter" in out and "jitamp::" not in out

    from cli_inputs.programs import ScopedLinear

    path = tmp_path / "model.pt"
    with torchscript_deprecation_ignored():
        import jitamp

        jitamp.disable()
        torch.jit.save(torch.jit.script(ScopedLinear()), str(path))
    status, out, err = run("dump", str(path))
    assert status == 0, err
    assert "jitamp::autocast_enter" in out


def test_all_methods_and_method():
    status, out, _ = run("dump", f"{PROGRAMS}:ScopedLinear", "--all-methods")
    assert status == 0 and "# method forward" in out
    status, _, err = run("dump", f"{PROGRAMS}:ScopedLinear", "--method", "nope")
    assert status == 2 and "no method 'nope'" in err


def test_optimized_keeps_smart_casts():
    status, out, err = run(
        "dump", f"{PROGRAMS}:scoped_mm", "--optimized", "--example-inputs", "4x4:float32,4x4:bfloat16"
    )
    assert status == 0, err
    # the simple executor's plan: the direct call makes both casts first
    assert 'jitamp::direct_call[op="aten::mm", cast_args=[1, 0]' in out and "jitamp::autocast_enter" in out


@pytest.mark.parametrize(
    "args, message",
    [
        (("dump", "/nonexistent/file.py:f"), "no such file: /nonexistent/file.py"),
        (("dump", f"{PROGRAMS}:missing"), "no 'missing' in"),
        (("dump", f"{PROGRAMS}:not_scriptable"), "cannot script"),
        (("dump", f"{PROGRAMS}:NeedsArgs"), "must be constructible without arguments"),
        (("dump", f"{PROGRAMS}:already_run"), "already run"),
        (("dump", f"{PROGRAMS}:scoped_mm", "--optimized", "--example-inputs", "4y4:float32"), "shape must look like 8x8"),
        (("dump", f"{PROGRAMS}:scoped_mm", "--optimized", "--example-inputs", "4x4:floaty"), "unknown dtype 'floaty'"),
        (("dump", f"{PROGRAMS}:scoped_mm", "--optimized"), "--optimized needs --example-inputs"),
        (("dump", PROGRAMS), "name the function or module"),
        (("dump", "/nonexistent/model.pt"), "no such file"),
        (("convert", PROGRAMS, "/tmp/out.pt"), "cannot load"),
        (("opt", f"{PROGRAMS}:scoped_mm", "--passes=nope"), "no pass or pipeline named 'nope'"),
        (("opt", f"{PROGRAMS}:scoped_mm", "--passes=rewrite,,inline"), "bad --passes"),
        (("opt", f"{PROGRAMS}:ScopedLinear", "--passes=rewrite,keep_constants_apart"),
         "mixes graph passes (rewrite) with steps of the freeze pipelines"),
        (("opt", f"{PROGRAMS}:scoped_mm", "--passes=keep_constants_apart"), "the target is a function"),
        (("opt", f"{PROGRAMS}:ScopedLinear", "--passes=freeze,keep_constants_apart"), "runs whole, alone"),
        (("opt", "/nonexistent/graph.ir", "--passes=inline"), "cannot read /nonexistent/graph.ir"),
    ],
)
def test_bad_input_is_one_line_and_nonzero(args, message):
    status, out, err = run(*args)
    assert status == 2
    assert message in err
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("name", ["scoped_mm", "nested_scopes", "ScopedLinear"])
def test_opt_runs_the_pipelines_jitamp_runs(name):
    """`jitamp opt --passes=rewrite,configure` is the graph `jitamp dump` shows."""
    dumped = run("dump", f"{PROGRAMS}:{name}")
    opted = run("opt", f"{PROGRAMS}:{name}", "--passes=rewrite,configure")
    assert dumped[0] == opted[0] == 0, dumped[2] + opted[2]
    assert opted[1] == dumped[1]


def test_opt_on_ir_text(tmp_path):
    """FILE.ir in, the graph a pass leaves out; a file that is not IR is one
    line naming it."""
    ir = tmp_path / "graph.ir"
    ir.write_text("# the input\ngraph(%x : Tensor):\n  %n : NoneType = prim::Constant()\n"
                  "  %d : str = prim::Constant[value=\"cpu,cuda\"]()\n  %r : int = prim::Constant[value=0]()\n"
                  "  %y : Tensor? = jitamp::autocast_to_fp16(%n, %d, %r)\n  %z : Tensor = aten::relu(%x)\n"
                  "  return (%z, %y)\n")
    status, out, err = run("opt", str(ir), "--passes=remove_casts_of_none")
    assert status == 0, err
    assert "aten::relu" in out and "autocast_to_fp16" not in out
    ir.write_text("graph(%x : Tensor):\n  return (%y)\n")
    status, _, err = run("opt", str(ir), "--passes=inline")
    assert status == 2 and err.startswith(f"jitamp: error: {ir} is not TorchScript IR")
    status, _, err = run("opt", str(ir), "--passes=keep_constants_apart")
    assert status == 2 and "runs on a model" in err


def test_verbose_shows_traceback():
    status, _, err = run("--verbose", "dump", f"{PROGRAMS}:missing")
    assert status == 2 and "Traceback" in err


def test_convert_round_trip(tmp_path):
    from cli_inputs.programs import ScopedLinear

    model = ScopedLinear().eval()
    src, dst = tmp_path / "in.pt", tmp_path / "out.pt"
    with torchscript_deprecation_ignored():
        import jitamp

        jitamp.disable()
        torch.jit.save(torch.jit.script(model), str(src))
        status, out, err = run("convert", str(src), str(dst))
        assert status == 0, err
        loaded = torch.jit.load(str(dst))
    assert "jitamp::autocast_enter" in str(loaded.forward.graph)
    x = torch.randn(3, 4)
    assert torch.equal(loaded(x), model(x)) and loaded(x).dtype == model(x).dtype


@pytest.mark.parametrize("command", ["dump", "convert", "example", "opt"])
def test_help_has_an_example(command):
    result = subprocess.run([sys.executable, "-m", "jitamp", command, "--help"], capture_output=True, text=True)
    assert result.returncode == 0
    assert "example" in result.stdout
    if command == "convert":
        assert "import jitamp" in result.stdout


def test_the_fuzzer_is_no_command():
    """The differential fuzzer is a developer tool of the repository, not
    shipped (tools/jitamp_fuzz; tests/test_fuzz.py runs its command line):
    `jitamp` lists no `fuzz`, and refuses it in argparse's one line."""
    out = io.StringIO()
    with redirect_stdout(out), pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0 and "fuzz" not in out.getvalue(), out.getvalue()
    result = subprocess.run([sys.executable, "-m", "jitamp", "fuzz", "--help"], capture_output=True, text=True)
    assert result.returncode == 2 and "invalid choice: 'fuzz'" in result.stderr, result.stderr


def test_optimized_module_method():
    status, out, err = run("dump", f"{PROGRAMS}:ScopedLinear", "--optimized", "--example-inputs", "2x4:float32")
    assert status == 0, err
    assert 'jitamp::direct_call[op="aten::linear", cast_args=[2, 1, 0]' in out
    assert "prim::CallMethod" not in out, "the executor's graph has callees inlined"


def test_bundled_example_matches_eager():
    status, out, err = run("example", "--no-graph")
    assert status == 0, err
    assert "OK: scripted matches eager autocast" in out


def test_library_prints_the_op_library_which_registers_the_ops_without_python_binding():
    """`jitamp library` prints the installed libjitamp_ops.so; loaded alone
    into a process that never imports jitamp, it registers the ops (the C++
    deploy tests preload it into a host without Python)."""
    import jitamp

    status, out, err = run("library")
    assert status == 0, err
    path = out.strip()
    assert path == jitamp.library_path() and os.path.basename(path) == "libjitamp_ops.so"
    assert os.path.isfile(path), path
    probe = ("import sys, torch\n"
             "torch.ops.load_library(sys.argv[1])\n"
             "assert 'jitamp' not in sys.modules\n"
             "print(torch.ops.jitamp.autocast_caller_region_in_plan())\n")
    done = subprocess.run([sys.executable, "-c", probe, path], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "0", done.stderr
