"""Deployment from C++: a model scripted with jitamp and saved in Python (or
saved without jitamp and given an autocast by `jitamp convert --autocast`) runs
in a C++ program built against the installed LibTorch with jitamp's op
library and no Python (tests/cpp/jitamp_run.cpp, built as jitamp_run by
cpp/CMakeLists.txt with -DJITAMP_BUILD_TESTS=ON, linked to libjitamp_ops.so), with or
without jitamp::RewriteModule, and in a host that links torch alone and gets
the ops from LD_PRELOAD (torch_run, as tritonserver does), and in a Python
process that never imports jitamp and loads the op library itself
(python_host.py), and gives eager's outputs and gradients bit for bit (the
same kernels run in both processes). And a program jitamp.export made,
compiled by AOTInductor, runs in LibTorch's AOTIModelPackageLoader
(tests/cpp/aoti_run.cpp, which links torch alone: the package needs no
jitamp) with the bits of eager's own export compiled the same way.

The op library is the one the install built (`jitamp.library_path()`, what a
user links or preloads): cpp/ is built with CMake once per test module, with
-DJITAMP_OPS_LIBRARY and -DJITAMP_BUILD_TESTS=ON, which compiles only the
programs: tests/cpp/jitamp_run.cpp twice (as jitamp_run and torch_run),
tests/cpp/aoti_run.cpp where torch ships the AOTInductor package loader (2.6+)
and the users' example, cpp/example.cpp (jitamp_example; about a minute on two
cores).
Where CMake is missing or cannot configure LibTorch (a CUDA wheel without the
CUDA toolkit), the fixture compiles the programs with the compiler
alone. Skipped only where no C++ compiler is found.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import jitamp
import oracle

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CPP_DIR = os.path.join(REPO, "cpp")  # the CMake build and the users' example
HARNESS = os.path.join(REPO, "tests", "cpp", "jitamp_run.cpp")
AOTI_HARNESS = os.path.join(REPO, "tests", "cpp", "aoti_run.cpp")
# LibTorch's AOTInductor package loader (torch 2.6+), which aoti_run needs
AOTI_LOADER = os.path.join(os.path.dirname(torch.__file__), "include", "torch", "csrc", "inductor",
                           "aoti_package", "model_package_loader.h")
PYTHON_HOST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python_host.py")
ROWS, COLS = 5, 16
CALLS = 3

# c10::ScalarType names, as jitamp_run prints them.
DTYPES = {"Float": torch.float32, "BFloat16": torch.bfloat16, "Half": torch.float16}


class DeployModel(nn.Module):
    """A bfloat16 autocast region (Linear, GELU, LayerNorm) with an
    autocast-disabled region nested in it, and a Linear outside both, which
    autocast casts only under the caller's region: the output is float32
    without one and bfloat16 with one."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(COLS, 32)
        self.norm = nn.LayerNorm(32)
        self.fc2 = nn.Linear(32, 32)
        self.head = nn.Linear(32, 8)
        self.skip = nn.Linear(COLS, 8)

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            h = self.norm(F.gelu(self.fc1(x)))
            with torch.autocast("cpu", enabled=False):
                r = self.fc2(h.float())
            y = self.head(h + r)
        return y + self.skip(x)


def _compiler() -> str | None:
    for name in (os.environ.get("CXX"), "c++", "g++", "clang++"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def _build_without_cmake(build, cxx: str) -> None:
    """Compiles tests/cpp/jitamp_run.cpp as jitamp_run and torch_run, and
    cpp/example.cpp as jitamp_example, with the compiler alone, with the flags torch gives extensions: where LibTorch's
    CMake config cannot be used (a CUDA wheel's needs the CUDA toolkit,
    which its pip packages do not carry), the C++ loaders are still tested."""
    from torch.utils import cpp_extension

    abi = int(torch._C._GLIBCXX_USE_CXX11_ABI)
    common = [cxx, "-std=c++20", "-O2", f"-D_GLIBCXX_USE_CXX11_ABI={abi}"]
    common += [f"-I{d}" for d in cpp_extension.include_paths()]
    common += ["-I" + os.path.join(REPO, "csrc", "jit_autocast")]
    libs = [f"-L{d}" for d in cpp_extension.library_paths()]
    libs += ["-lc10", "-ltorch", "-ltorch_cpu"]
    libs += [f"-Wl,-rpath,{d}" for d in cpp_extension.library_paths()]
    ops = jitamp.library_path()
    # LINKER --no-as-needed before the library, as cpp/CMakeLists.txt.
    with_ops = ["-Wl,--no-as-needed", ops, f"-Wl,-rpath,{os.path.dirname(ops)}"]
    example = os.path.join(CPP_DIR, "example.cpp")
    commands = [
        common + [HARNESS, "-o", str(build / "jitamp_run")] + with_ops + libs,
        common + [HARNESS, "-DJITAMP_RUN_PLAIN_HOST", "-o", str(build / "torch_run")] + libs,
        common + [example, "-o", str(build / "jitamp_example")] + with_ops + libs,
    ]
    if os.path.exists(AOTI_LOADER):
        commands.append(common + [AOTI_HARNESS, "-o", str(build / "aoti_run")] + libs)
    running = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
               for c in commands]
    for command, process in zip(commands, running):
        out, _ = process.communicate()
        assert process.returncode == 0, f"{' '.join(command)} failed ({process.returncode}):\n{out}"


def _build_with_cmake(build, cxx: str) -> str | None:
    """Builds cpp/ with CMake against the installed op library
    (-DJITAMP_OPS_LIBRARY), the test harness included (-DJITAMP_BUILD_TESTS=ON).
    Returns None, or why CMake cannot be used here
    (then nothing is built)."""
    cmake = shutil.which("cmake")
    if cmake is None:
        return "cmake is not installed"
    configure = [cmake, "-S", CPP_DIR, "-B", str(build),
                 f"-DCMAKE_PREFIX_PATH={torch.utils.cmake_prefix_path}",
                 f"-DCMAKE_CXX_COMPILER={cxx}", "-DCMAKE_BUILD_TYPE=Release",
                 f"-DJITAMP_OPS_LIBRARY={jitamp.library_path()}", "-DJITAMP_BUILD_TESTS=ON"]
    if shutil.which("ninja"):
        configure += ["-G", "Ninja"]
    compile_ = [cmake, "--build", str(build), "--parallel", str(os.cpu_count() or 2)]
    for command in (configure, compile_):
        done = subprocess.run(command, capture_output=True, text=True)
        if command is configure and done.returncode != 0 and torch.version.cuda and (
                "cannot find the CUDA" in done.stderr + done.stdout):
            return (f"torch {torch.__version__} is a CUDA build, and CMake cannot find the CUDA "
                    "toolkit its LibTorch config needs")
        assert done.returncode == 0, (
            f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return None


@pytest.fixture(scope="module")
def cpp_build(tmp_path_factory):
    """Builds cpp/ against the installed op library (jitamp.library_path());
    returns the build folder. With CMake, or, where CMake cannot configure
    LibTorch (a CUDA wheel without the CUDA toolkit), with the compiler
    alone (_build_without_cmake)."""
    cxx = _compiler()
    if cxx is None:
        pytest.skip("no C++ compiler ($CXX, c++, g++ or clang++): "
                    "cannot build the C++ deployment program")
    start = time.monotonic()
    build = tmp_path_factory.mktemp("cpp_build")
    why_not = _build_with_cmake(build, cxx)
    if why_not is not None:
        build = tmp_path_factory.mktemp("cpp_build_without_cmake")
        _build_without_cmake(build, cxx)
    how = "with CMake" if why_not is None else f"without CMake ({why_not})"
    print(f"\nbuilt cpp/ {how} in {time.monotonic() - start:.1f} s", file=sys.stderr)
    programs = ["jitamp_run", "torch_run", "jitamp_example"] + (["aoti_run"] if os.path.exists(AOTI_LOADER) else [])
    for made in programs:
        assert (build / made).is_file(), f"the build made no {build / made}"
    return build


@pytest.fixture(scope="module")
def jitamp_run(cpp_build) -> str:
    return str(cpp_build / "jitamp_run")


# How each loader gets jitamp's ops into the process: (program, environment).
# "rewrite": jitamp_run calls jitamp::RewriteModule after torch::jit::load.
# "stock": a host that links jitamp_ops and calls nothing of it (a LibTorch
# app): plain torch::jit::load, PyTorch's JIT autocast left on; the model's
# loader object configures it.
# "preload": torch_run, a host that links torch alone (tritonserver): the ops
# come from LD_PRELOAD=$(jitamp library), and nothing else changes.
# "python_library": a Python server that never imports jitamp and loads the
# op library itself (torch.ops.load_library), then plain torch.jit.load:
# tests/python_host.py, jitamp_run's twin in Python.
def _loader(cpp_build, loader: str) -> tuple[list[str], list[str], dict[str, str] | None]:
    """(the command that runs the host, its loader flags, its environment)."""
    if loader == "preload":
        if not sys.platform.startswith("linux"):
            pytest.skip("LD_PRELOAD is how a Linux host loads a library it does not link")
        env = dict(os.environ, LD_PRELOAD=jitamp.library_path())
        return [str(cpp_build / "torch_run")], [], env
    if loader == "python_library":
        return [sys.executable, PYTHON_HOST], ["--library", jitamp.library_path()], None
    return [str(cpp_build / "jitamp_run")], (["--stock"] if loader == "stock" else []), None


class PlainDeployModel(nn.Module):
    """No autocast in its source: `jitamp convert --autocast cpu:bfloat16`
    gives it one around forward."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(COLS, 32)
        self.norm = nn.LayerNorm(32)
        self.head = nn.Linear(32, 8)

    def forward(self, x):
        return self.head(self.norm(F.gelu(self.fc1(x)))) + x.sum()


def _scripted(tmp_path) -> tuple:
    torch.manual_seed(0)
    model = DeployModel().eval()
    path = tmp_path / "model.pt"
    torch.jit.save(oracle.script(model), str(path))
    return model, str(path)


def _autocast_converted(tmp_path) -> tuple:
    """Saved without jitamp, then `jitamp convert --autocast cpu:bfloat16`;
    eager's counterpart is the original module called inside that autocast."""
    torch.manual_seed(0)
    model = PlainDeployModel().eval()
    plain, path = tmp_path / "plain.pt", tmp_path / "model.pt"
    oracle.save_without_jitamp(model, str(plain))
    done = subprocess.run([sys.executable, "-m", "jitamp", "convert", str(plain), str(path),
                           "--autocast", "cpu:bfloat16"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr

    def eager(x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return model(x)
    return eager, str(path)


def deploy_function(x):
    """A scripted function: torch.jit.save saves it as a module whose
    forward is the function (with jitamp's loader). The bfloat16 addmm is
    what the profiling executor would split into mm + add."""
    with torch.autocast("cpu", dtype=torch.bfloat16):
        h = torch.addmm(x[:, :5], x, x.t())
        with torch.autocast("cpu", enabled=False):
            r = torch.mm(h.float(), x)
    return r + x.sum()


def _scripted_function(tmp_path) -> tuple:
    path = tmp_path / "function.pt"
    torch.jit.save(oracle.script(deploy_function), str(path))
    return deploy_function, str(path)


SAVED = {"scripted": _scripted, "autocast_converted": _autocast_converted,
         "scripted_function": _scripted_function}


@pytest.fixture(scope="module", params=list(SAVED))
def saved_model(request, tmp_path_factory):
    """(eager's counterpart, the path of the saved jitamp model)."""
    with oracle.torchscript_deprecation_ignored():
        return SAVED[request.param](tmp_path_factory.mktemp("cpp_model"))


def _raw(t: torch.Tensor) -> bytes:
    """The bytes of a tensor in host (here little-endian) order."""
    return bytes(t.contiguous().view(torch.uint8).flatten().tolist())


def _read(path, shape) -> torch.Tensor:
    return torch.frombuffer(bytearray(path.read_bytes()), dtype=torch.float32).reshape(shape)


def _run_cpp(host: list[str], model_path: str, x: torch.Tensor, tmp_path, flags,
             expect_error: str | None = None, env: dict[str, str] | None = None) -> tuple:
    """Runs jitamp_run; returns (its output as float32, the output's dtype,
    the input's gradient or None). With expect_error, checks that it failed
    with that message instead."""
    assert x.dtype == torch.float32 and x.dim() == 2 and sys.byteorder == "little"
    inp, out, grad = tmp_path / "input.bin", tmp_path / "output.bin", tmp_path / "grad.bin"
    inp.write_bytes(_raw(x))
    command = [*host, *flags, "--calls", str(CALLS), model_path, str(inp),
               str(x.shape[0]), str(x.shape[1]), str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    if expect_error is not None:
        assert done.returncode != 0 and expect_error in done.stderr, (
            f"eager raised {expect_error!r}; C++ ({done.returncode}):\n{done.stdout}\n{done.stderr}")
        return None, None, None
    assert done.returncode == 0, (
        f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    fields = dict(line.split(" ", 1) for line in done.stdout.strip().splitlines())
    assert fields.get("dtype") in DTYPES, done.stdout
    shape = [int(size) for size in fields["shape"].split()]
    return (_read(out, shape), DTYPES[fields["dtype"]],
            _read(grad, list(x.shape)) if "--grad" in flags else None)


OUTER = {
    "plain": (None, []),
    "outer_bf16": (oracle.cpu_autocast(torch.bfloat16), ["--autocast"]),
    "outer_fp16": (oracle.cpu_autocast(torch.float16), ["--autocast-fp16"]),
}


def _same_bits(got: torch.Tensor, want: torch.Tensor, what: str) -> None:
    want = want.detach().float()  # exact: float32 holds every bfloat16 and float16
    assert got.shape == want.shape, f"{what}: C++ shape {got.shape}, eager {want.shape}"
    assert torch.equal(got.view(torch.int32), want.view(torch.int32)), (
        f"{what}: C++ and eager differ (max abs diff {(got - want).abs().max()})")


@pytest.mark.parametrize("loader", ["rewrite", "stock", "preload", "python_library"])
@pytest.mark.parametrize("mode", ["no_grad", "inference_mode", "grad", "backward"])
@pytest.mark.parametrize("case", list(OUTER))
def test_cpp_matches_eager(cpp_build, saved_model, tmp_path, loader, mode, case):
    _check_cpp(cpp_build, saved_model, tmp_path, loader, mode, case)


@pytest.mark.parametrize("copy, loader", [("deepcopy", "stock"), ("deepcopy", "preload"), ("clone", "rewrite"),
                                          ("freeze", "rewrite")])
@pytest.mark.parametrize("mode", ["no_grad", "backward"])
@pytest.mark.parametrize("case", ["plain", "outer_bf16"])
def test_cpp_copy_matches_eager(cpp_build, saved_model, tmp_path, copy, loader, mode, case):
    """A copy of the loaded model (jitamp_run --copy): Module::deepcopy
    shares the original's configured functions (the loader's __setstate__,
    which the copy runs, leaves them alone); Module::clone and
    torch::jit::freeze compile new ones after it, which
    jitamp::RewriteModule configures (README, "C++ deployment")."""
    _check_cpp(cpp_build, saved_model, tmp_path, loader, mode, case, ["--copy", copy])


@pytest.mark.parametrize("loader", ["stock", "preload"])
@pytest.mark.parametrize("copy", ["clone", "freeze"])
@pytest.mark.parametrize("case", ["plain", "outer_bf16"])
def test_cpp_copy_without_rewrite_raises(cpp_build, saved_model, tmp_path, copy, loader, case):
    """Without jitamp::RewriteModule, the new functions of a clone or a
    C++ freeze would run as TorchScript's defaults say (they did, up to
    0.23 off eager's outputs): their first call raises instead, naming the
    fix (passes/use_scope_ops_of_plans.h)."""
    host, loader_flags, env = _loader(cpp_build, loader)
    x = torch.randn(ROWS, COLS, generator=torch.Generator().manual_seed(1))
    flags = OUTER[case][1] + loader_flags + ["--copy", copy, "--no-grad"]
    _run_cpp(host, saved_model[1], x, tmp_path, flags, env=env,
             expect_error="jitamp has not configured: TorchScript's executor")


def _check_cpp(cpp_build, saved_model, tmp_path, loader: str, mode: str, case: str,
               extra_flags: list[str] = ()) -> None:
    model, model_path = saved_model
    x = torch.randn(ROWS, COLS, generator=torch.Generator().manual_seed(1))
    outer, flags = OUTER[case]
    host, loader_flags, env = _loader(cpp_build, loader)
    flags = list(flags) + loader_flags + list(extra_flags)
    flags += {"no_grad": ["--no-grad"], "inference_mode": ["--inference-mode"], "grad": [],
              "backward": ["--grad", str(tmp_path / "grad.bin")]}[mode]

    # Eager, the oracle; backward outside the outer region, as jitamp_run does.
    # Eager may raise (its cast cache, keyed by the weight alone, hands a
    # bfloat16 cast made in the model's scope to an op under the outer
    # float16 region): then C++ must raise the same.
    leaf = x.clone().requires_grad_(mode == "backward")
    try:
        with (torch.inference_mode() if mode == "inference_mode" else torch.set_grad_enabled(mode != "no_grad")), \
                (outer() if outer else contextlib.nullcontext()):
            expected = model(leaf)
        if mode == "backward":
            expected.float().sum().backward()
    except RuntimeError as error:
        _run_cpp(host, model_path, x, tmp_path, flags, expect_error=str(error).splitlines()[0], env=env)
        return

    values, dtype, grad = _run_cpp(host, model_path, x, tmp_path, flags, env=env)
    assert dtype == expected.dtype, f"C++ returned {dtype}, eager {expected.dtype}"
    _same_bits(values, expected, "output")
    if mode == "backward":
        _same_bits(grad, leaf.grad, "input gradient")


@pytest.mark.parametrize("grad", [False, True], ids=["forward", "backward"])
@pytest.mark.parametrize("case", list(OUTER))
def test_python_load_matches_eager(saved_model, case, grad):
    """The same saved model in Python: torch.jit.load, no jitamp.rewrite."""
    model, model_path = saved_model
    x = torch.randn(ROWS, COLS, generator=torch.Generator().manual_seed(1))
    loaded = torch.jit.load(model_path)
    assert "ops.jitamp.autocast_enter" in loaded.code, loaded.code
    oracle.check_against_eager(model, [x], scripted=loaded, outer=OUTER[case][0], grad=grad)


def test_cpp_example_runs_a_saved_model(cpp_build, saved_model):
    """cpp/example.cpp, the users' example: torch::jit::load, then
    jitamp::RewriteModule (a no-op on a loaded model), then forward on a
    random input; it prints the dtype and shape eager's output has."""
    model, model_path = saved_model
    done = subprocess.run([str(cpp_build / "jitamp_example"), model_path, str(ROWS), str(COLS)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    fields = dict(line.split(" ", 1) for line in done.stdout.strip().splitlines())
    with torch.inference_mode():
        expected = model(torch.randn(ROWS, COLS))
    assert DTYPES[fields["dtype"]] == expected.dtype, done.stdout
    assert fields["shape"].replace(" ", "") == str(list(expected.shape)).replace(" ", ""), done.stdout


def test_cpp_reports_bad_arguments(jitamp_run, tmp_path):
    done = subprocess.run([jitamp_run, "model.pt"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "usage: jitamp_run" in done.stderr, done.stderr
    done = subprocess.run([jitamp_run, "--copy", "shallow", "m.pt", "i.bin", "2", "3", "o.bin"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--copy needs 'deepcopy', 'clone' or 'freeze'" in done.stderr, done.stderr
    inp = tmp_path / "input.bin"
    inp.write_bytes(_raw(torch.zeros(2, 3)))
    done = subprocess.run([jitamp_run, str(tmp_path / "missing.pt"), str(inp), "2", "4",
                           str(tmp_path / "out.bin")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "has 24 bytes, expected 32" in done.stderr, done.stderr
    done = subprocess.run([jitamp_run, str(tmp_path / "missing.pt"), str(inp), "2", "3",
                           str(tmp_path / "out.bin")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "cannot load model" in done.stderr, done.stderr


def test_host_without_jitamp_ops_fails_at_load_naming_the_op(cpp_build, saved_model, tmp_path):
    """torch_run without LD_PRELOAD: the load stops at once, naming the
    first jitamp op it compiles (the loader's `prepare_loaded`, or an op of a
    submodule's method compiled before it) and showing the line, whose value
    names say `needs_import_jitamp` (README, "Saving and loading")."""
    _, model_path = saved_model
    x = torch.randn(ROWS, COLS, generator=torch.Generator().manual_seed(1))
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    inp = tmp_path / "input.bin"
    inp.write_bytes(_raw(x))
    done = subprocess.run([str(cpp_build / "torch_run"), model_path, str(inp), str(ROWS), str(COLS),
                           str(tmp_path / "out.bin")], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
    assert "Unknown builtin op: jitamp::" in done.stderr, done.stderr
    assert "needs_import_jitamp" in done.stderr.split("<--- HERE")[0], done.stderr


# --- AOTInductor packages, from C++ -----------------------------------------

def _aoti_package(program, path) -> str:
    """AOTInductor's package of `program`, at `path`. On torch 2.15
    AOTInductor asks the registered accelerator for its DeviceAllocator:
    once test_backend_sanity.py has registered the jitamptest backend in
    this process (as pytest collects it), that backend's plain
    c10::Allocator, and it fails. Then in a process without it."""
    try:
        return torch._inductor.aoti_compile_and_package(program, package_path=str(path))
    except Exception as error:
        if "is not a DeviceAllocator" not in str(error):
            raise
    saved = f"{path}.program.pt2"
    torch.export.save(program, saved)
    code = ("import sys, torch\n"
            "torch._inductor.aoti_compile_and_package(torch.export.load(sys.argv[1]), package_path=sys.argv[2])")
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", code, saved, str(path)], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    return str(path)


def _run_aoti_cpp(cpp_build, package: str, args: tuple, tmp_path) -> list[list[torch.Tensor]]:
    """Each call's outputs (flattened) of `package` run by aoti_run."""
    inputs, prefix = tmp_path / "inputs.pt", tmp_path / f"{os.path.basename(package)}.out"
    torch.save(list(torch.utils._pytree.tree_leaves(args)), str(inputs))
    # the package's library needs LibTorch's on the loader's path, as in any deployment
    lib = os.path.join(os.path.dirname(torch.__file__), "lib")
    env = dict(os.environ, LD_LIBRARY_PATH=os.pathsep.join(filter(None, [lib, os.environ.get("LD_LIBRARY_PATH")])))
    done = subprocess.run([str(cpp_build / "aoti_run"), "--calls", str(CALLS), package, str(inputs), str(prefix)],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    return [list(torch.load(f"{prefix}{call}.pt", weights_only=True)) for call in range(1, CALLS + 1)]


@pytest.fixture(scope="module")
def aoti_anchor(cpp_build, tmp_path_factory):
    """(the eager model, its inputs, each call's outputs of eager's own
    export compiled by AOTInductor and run by aoti_run)."""
    if not os.path.exists(AOTI_LOADER):
        pytest.skip(f"torch {torch.__version__} ships no AOTIModelPackageLoader (torch 2.6+)")
    import export_models
    eager = export_models.build("gru_cell_loop")
    args = tuple(export_models.inputs("gru_cell_loop"))
    tmp = tmp_path_factory.mktemp("aoti_anchor")
    with torch.no_grad():
        package = _aoti_package(torch.export.export(eager, args), tmp / "anchor.pt2")
    return eager, args, _run_aoti_cpp(cpp_build, package, args, tmp)


@pytest.mark.parametrize("explicit_casts", [False, True], ids=["regions", "explicit_casts"])
def test_aoti_package_loader_runs_the_program_as_eagers_export(cpp_build, aoti_anchor, explicit_casts, tmp_path):
    """A GRUCell loop in a bfloat16 region, scripted with jitamp,
    jitamp.export-ed (either form), compiled by AOTInductor and run by
    LibTorch's AOTIModelPackageLoader: calls 1-3 give the bits that eager's
    own export compiled and run the same way gives, and that Python's
    aoti_load_package gives of the same package."""
    eager, args, expected = aoti_anchor
    with torch.no_grad():
        program = jitamp.export(oracle.script(eager), args, explicit_casts=explicit_casts)
        package = _aoti_package(program, tmp_path / "program.pt2")
        in_python = torch._inductor.aoti_load_package(package)(*args)
    calls = _run_aoti_cpp(cpp_build, package, args, tmp_path)
    assert expected[0] and expected[0][0].dtype == torch.bfloat16, expected
    for call, (got, want) in enumerate(zip(calls, expected), 1):
        oracle.assert_same(want, got, what=f"C++ call {call}, against eager's export")
    oracle.assert_same(list(torch.utils._pytree.tree_leaves(in_python)), calls[0], what="C++ against Python")


def test_aoti_run_reports_bad_arguments(cpp_build, aoti_anchor, tmp_path):
    done = subprocess.run([str(cpp_build / "aoti_run"), "package.pt2"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "usage: aoti_run" in done.stderr, done.stderr
    done = subprocess.run([str(cpp_build / "aoti_run"), str(tmp_path / "missing.pt2"), "in.pt", "out"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "aoti_run:" in done.stderr, done.stderr
