"""The Python package's structure: its imports form a DAG, and torch is
patched in one module (jitamp/_patches.py).

Both checks read the package's source files (ast), not the imported
modules. `python tests/test_package.py` prints the import graph.
"""
from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys

import pytest

PACKAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python", "jitamp")


def _modules(root: str, *, compiled: bool = False) -> dict[str, str]:
    """Dotted module name -> path of each .py file under the package `root`
    (compiled: of each compiled extension, `_C.cpython-311-x86_64-linux-gnu.so`)."""
    base = os.path.basename(root)
    found = {}
    for folder, _, files in os.walk(root):
        for name in files:
            if compiled and name.endswith((".so", ".pyd")):
                stem = name.split(".")[0]
            elif not compiled and name.endswith(".py"):
                stem = name[:-3]
            else:
                continue
            parts = os.path.relpath(os.path.join(folder, stem), root).split(os.sep)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join([base, *parts])] = os.path.join(folder, name)
    return found


def _top_level_names(path: str) -> set[str]:
    """The names a module binds at its top level (defs, classes,
    assignments, imports)."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


def _imported(modules: dict[str, str], compiled: dict[str, str], base: str, name: str) -> str:
    """The module `from base import name` imports: base.name where that is
    a module (compiled ones, as jitamp._C, import nothing of ours); else
    base, unless base is a package whose __init__ does not bind `name`
    (base.name: a module that is not there)."""
    if f"{base}.{name}" in modules or f"{base}.{name}" in compiled:
        return f"{base}.{name}"
    if base in modules and (not modules[base].endswith("__init__.py")
                            or name in _top_level_names(modules[base])):
        return base
    return f"{base}.{name}"


def import_graph(root: str = PACKAGE) -> dict[str, set[str]]:
    """Module -> the package's modules it imports, anywhere in its code
    (function-level imports too: they close a cycle as surely, only later).
    `from X import name` imports X.name or X (_imported); `import a.b`
    imports a.b; a package a module imports through (a.b for a.b.c) is not
    an edge of its own."""
    modules, compiled = _modules(root), _modules(root, compiled=True)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        with open(path) as f:
            tree = ast.parse(f.read(), path)
        package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                targets = [_imported(modules, compiled, base, alias.name) for alias in node.names]
            else:
                continue
            for target in targets:
                if target in modules and target != name:
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan),
    and modules that import themselves: every import cycle is in one."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph[node]):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph[node]:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycles():
    graph = import_graph()
    assert "jitamp.api" in graph and "jitamp.cli" in graph, sorted(graph)
    assert cycles(graph) == []


def test_the_cycle_check_finds_cycles(tmp_path):
    """The check above can fail: two modules of a package that import each
    other (one inside a function), and a module of a subpackage that
    imports back the module that imports it. (`_ext` stands for a compiled
    extension: no edge.)"""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("from ._ext import g\nfrom . import _ext\nVERSION = 1\n")
    (package / "_ext.cpython-311-x86_64-linux-gnu.so").write_bytes(b"")
    (package / "a.py").write_text("from . import b\n\ndef f():\n    return b\n")
    (package / "b.py").write_text("def g():\n    from .a import f\n    return f\n")
    (package / "c.py").write_text("import os\nimport pkg.sub.d\nfrom . import _ext, VERSION\n")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "d.py").write_text("from .. import c\n")
    graph = import_graph(str(package))
    assert graph["pkg"] == set()
    assert graph["pkg.c"] == {"pkg", "pkg.sub.d"}
    assert cycles(graph) == [["pkg.a", "pkg.b"], ["pkg.c", "pkg.sub.d"]]


# --- torch patched in one place ----------------------------------------------

PATCHES = "jitamp._patches"


def _torch_names(tree: ast.Module) -> set[str]:
    """Names a module binds to torch, its submodules or what they hold, or
    to builtins (import torch; import torch.jit.frontend as f; from torch.x
    import y; import builtins)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in ("torch", "builtins"):
                    names.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if node.module.split(".")[0] in ("torch", "builtins"):
                names.update(alias.asname or alias.name for alias in node.names)
    return names


def _root(node: ast.expr) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def torch_patches(root: str = PACKAGE) -> list[str]:
    """`module:line` of each statement outside jitamp._patches that sets or
    deletes an attribute of torch (or of builtins): an assignment to
    `torch.X...`, or setattr/delattr of an object reached from torch."""
    found = []
    for name, path in _modules(root).items():
        if name == PATCHES:
            continue
        with open(path) as f:
            tree = ast.parse(f.read(), path)
        torch_names = _torch_names(tree)
        for node in ast.walk(tree):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
                targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
                if any(isinstance(t, ast.Attribute) and _root(t) in torch_names for t in targets):
                    found.append(f"{name}:{node.lineno}")
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                  and node.func.id in ("setattr", "delattr") and node.args
                  and _root(node.args[0]) in torch_names):
                found.append(f"{name}:{node.lineno}")
    return found


def test_torch_is_patched_only_in_the_patches_module():
    assert torch_patches() == []


def test_the_patch_check_finds_patches(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text(
        "import torch\nimport torch.jit.frontend as fe\nfrom torch.jit import _freeze\nimport builtins\n"
        "torch.jit.freeze = None\nfe.parse_def = None\nsetattr(_freeze, 'freeze', None)\n"
        "delattr(builtins, 'x')\nx = torch.jit.freeze\nsetattr(object(), 'a', 1)\n")
    assert torch_patches(str(package)) == ["pkg.a:5", "pkg.a:6", "pkg.a:7", "pkg.a:8"]


def test_the_patches_are_installed_when_the_list_says():
    """AT_IMPORT and ON_FIRST_USE in place after jitamp's first use; each patch enable()
    installs in place while enabled, and torch's back after disable()."""
    import torch

    import jitamp
    from jitamp import _patches

    jitamp.enable()
    jitamp.disable()
    for patch in _patches.AT_IMPORT + _patches.ON_FIRST_USE:
        if isinstance(patch, _patches.ScriptedAsBuiltin):
            assert torch.jit._builtins._find_builtin(getattr(patch.owner, patch.name)) == patch.op, patch
        else:
            assert getattr(getattr(patch.owner, patch.name), "_jitamp_patch", False), patch
    assert torch.jit.freeze is torch.jit._freeze.freeze
    assert not jitamp.is_enabled()
    hooks_before = torch._C._jit_get_emit_hooks()
    with jitamp.enable():
        installed = list(jitamp.api._state.patches)
        kinds = [type(patch) for patch in installed]
        assert kinds[:2] == [_patches.BuiltinJitAutocastOff, _patches.EmitHooks]
        replaced = [patch for patch in installed if isinstance(patch, _patches.Replace)]
        assert len(replaced) == len(installed) - 2
        for patch in replaced:
            assert getattr(patch.owner, patch.name) is patch.replacement, patch
        hooks = installed[1]
        assert torch._C._jit_get_emit_hooks == hooks._get_emit_hooks
        assert torch._C._jit_set_emit_hooks == hooks._set_emit_hooks
    for patch in replaced:
        if patch.original is _patches._ABSENT:
            assert not hasattr(patch.owner, patch.name), patch
        else:
            assert getattr(patch.owner, patch.name) is patch.original, patch
    assert torch._C._jit_get_emit_hooks() == hooks_before


# A module whose 4-tuple attribute sits where a refreshed op packet's old
# op object was (its id still in TorchScript's table of builtins), scripted.
_STALE_BUILTIN = """
import gc, sys, warnings
warnings.simplefilter("ignore")
import torch
if sys.argv[1] == "jitamp":
    import jitamp
    jitamp.enable()  # (its first use, which installs that patch)
lib = torch.library.Library("jitamp_stale_builtin", "DEF")
lib.define("f(Tensor x) -> Tensor")
stale = id(torch.ops.jitamp_stale_builtin.f._op)  # registered in the table by id
lib.define("f.other(Tensor x, int y) -> Tensor")  # refreshes the packet: a new op object
gc.collect()
kept = [tuple(range(i, i + 4)) for i in range(2000)]
hit = [t for t in kept if id(t) == stale]
print("collision" if hit else "no collision")

class M(torch.nn.Module):
    def __init__(self, pad):
        super().__init__()
        self.pad = pad

    def forward(self, x):
        return torch.nn.functional.pad(x, self.pad)

for t in hit + kept[:1]:
    try:
        torch.jit.script(M(t))
        print("scripted")
    except RuntimeError as exc:
        print("RuntimeError:", str(exc).split(chr(10))[1])
"""


def test_a_refreshed_op_packet_never_makes_a_tuple_a_builtin(tmp_path):
    """Plain torch (no jitamp): the object at a refreshed packet's old op's
    address compiles as that op (the CI flake of Conv2d's
    `_reversed_padding_repeated_twice` after torch.export imported
    torch.ao.quantization). After jitamp's first use the old op stays alive:
    no object gets its address, and the module scripts."""
    script = tmp_path / "stale_builtin.py"  # TorchScript reads the module's source
    script.write_text(_STALE_BUILTIN)

    def run(which: str) -> list[str]:
        done = subprocess.run([sys.executable, str(script), which], capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout.splitlines()

    assert run("plain") == ["collision", "RuntimeError: builtin cannot be used as a value:", "scripted"]
    assert run("jitamp") == ["no collision", "scripted"]


# What jitamp may patch in torch's Python side, each attribute's object by
# name (a submodule imported since is a new name, not a change), and the
# settings: printed as a set of the names whose objects differ.
_TORCH_CHANGES = """
import builtins, sys, warnings
warnings.simplefilter("ignore")
import torch, torch.jit._builtins, torch.jit._recursive, torch.jit._trace, torch.jit.frontend, torch._ops
from torch import _jit_internal
from torch.amp.autocast_mode import autocast
from torch.jit import _freeze

OWNERS = {"torch": torch, "torch.jit": torch.jit, "_freeze": _freeze, "torch._C": torch._C,
          "ScriptFunction": torch._C.ScriptFunction, "_jit_internal": _jit_internal, "torch._ops": torch._ops,
          "frontend": torch.jit.frontend, "_recursive": torch.jit._recursive, "_trace": torch.jit._trace,
          "autocast": autocast, "builtins": builtins}

def state():
    seen = {f"{owner}.{name}": id(value) for owner, obj in OWNERS.items() for name, value in vars(obj).items()}
    available = getattr(torch.amp, "is_autocast_available", None)  # (the builtin jitamp adds)
    seen["builtin table"] = available and torch.jit._builtins._find_builtin(available)
    seen["emit hooks"] = hash(torch._C._jit_get_emit_hooks())
    seen["jit autocast"] = torch._C._jit_set_autocast_mode(torch._C._jit_set_autocast_mode(True))
    return seen

if sys.argv[1] == "export":  # (torch.export's import changes torch itself: torch.manual_seed)
    import torch.export
    torch.export.export(torch.nn.Linear(2, 2), (torch.randn(1, 2),))
before = state()
import jitamp
step = sys.argv[1]
if step == "enable":
    jitamp.enable()
    jitamp.disable()
elif step == "rewrite":
    jitamp.rewrite(torch.jit.script(torch.nn.Linear(2, 2)))
elif step == "load":
    torch.jit.load(sys.argv[2])
elif step == "export":
    jitamp.export(torch.jit.script(torch.nn.Linear(2, 2)), (torch.randn(1, 2),))
after = state()
print(sorted(name for name, value in before.items() if after.get(name, value) != value))
"""


@pytest.mark.parametrize("step", ["import", "load", "enable", "rewrite", "export"])
def test_import_jitamp_changes_only_freeze_in_torch_until_its_first_use(step, tmp_path):
    """In a fresh process, `import jitamp` (and a load of a model jitamp
    rewrote, which uses none of the rest) replaces torch.jit.freeze and
    optimize_for_inference alone (_patches.AT_IMPORT); every other
    attribute of the torch modules jitamp patches, the table of builtins,
    the emit hooks and the built-in JIT autocast stay as they were until
    jitamp's first use, which installs _patches.ON_FIRST_USE; enable() and
    disable() leave that."""
    import torch

    from jitamp import _export, _patches
    from jitamp._deprecation import torchscript_deprecation_ignored
    from oracle import script

    if step == "export":
        try:
            _export._check_torch()
        except RuntimeError as error:  # (torch before 2.5)
            pytest.skip(str(error))
    script_path = tmp_path / "torch_changes.py"
    script_path.write_text(_TORCH_CHANGES)
    model = tmp_path / "model.pt"
    with torchscript_deprecation_ignored():
        torch.jit.save(script(torch.nn.Linear(2, 2)), str(model))
    done = subprocess.run([sys.executable, str(script_path), step, str(model)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    changed = eval(done.stdout.strip().splitlines()[-1])
    owners = {torch.jit._freeze: "_freeze", torch._C.ScriptFunction: "ScriptFunction",
              torch._jit_internal: "_jit_internal", torch._ops: "torch._ops"}

    def names(patches) -> set[str]:
        found = set()
        for patch in patches:
            if isinstance(patch, _patches.Replace):
                found.add(f"{owners[patch.owner]}.{patch.name}")
                found.update(f"torch.jit.{patch.name}" for _ in patch.also)
            elif getattr(patch.owner, patch.name, None) is not None:  # (a torch without it: no entry)
                found.add("builtin table")
        return found

    at_import = names(_patches.AT_IMPORT)
    assert at_import == {"_freeze.freeze", "torch.jit.freeze", "_freeze.optimize_for_inference",
                         "torch.jit.optimize_for_inference"}
    if step in ("import", "load"):
        assert sorted(changed) == sorted(at_import)
    else:
        assert sorted(changed) == sorted(at_import | names(_patches.ON_FIRST_USE))


def _saved_scoped_linear(path) -> str:
    """A module with a bfloat16 scope, scripted with jitamp and saved."""
    import torch

    from jitamp._deprecation import torchscript_deprecation_ignored
    from oracle import script

    class ScopedLinear(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)

        def forward(self, x):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                return self.lin(x)

    torch.manual_seed(0)
    with torchscript_deprecation_ignored():
        torch.jit.save(script(ScopedLinear().eval()), str(path))
    return str(path)


_FREEZE_BOUND_EARLY = """
import sys, warnings
warnings.simplefilter("ignore")
import torch
from torch.jit import freeze  # before `import jitamp`: torch's own
import jitamp

try:
    freeze(torch.jit.load(sys.argv[1]).eval())(torch.randn(2, 4))
    print("ran")
except RuntimeError as error:
    print("RuntimeError:", " ".join(str(error).split()))
"""


def test_a_freeze_bound_before_import_jitamp_refuses_to_run_what_it_froze(tmp_path):
    """`from torch.jit import freeze` before `import jitamp` gets torch's own
    freeze, whose copy of a jitamp model jitamp has not configured: its
    first call raises, saying what to call instead, never runs unlike eager."""
    script_path = tmp_path / "freeze_bound_early.py"
    script_path.write_text(_FREEZE_BOUND_EARLY)
    done = subprocess.run([sys.executable, str(script_path), _saved_scoped_linear(tmp_path / "model.pt")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = done.stdout.strip().splitlines()[-1]
    assert out.startswith("RuntimeError:") and "jitamp has not configured" in out, out
    assert "bound to a name before `import jitamp`" in out and "call jitamp.freeze(module) instead" in out, out


_FREEZE_A_LOAD = """
import sys, warnings
warnings.simplefilter("ignore")
import torch
import jitamp

x = torch.randn(2, 4)
frozen = torch.jit.freeze(torch.jit.load(sys.argv[1]).eval())  # the load is jitamp's first use
for call in range(3):
    with torch.autocast("cpu", dtype=torch.float16):
        print(torch.equal(frozen(x), torch.jit.load(sys.argv[1]).eval()(x)))
"""


def test_freezing_a_jitamp_model_as_it_loads_freezes_it_as_jitamp_does(tmp_path):
    """`torch.jit.freeze(torch.jit.load(path))` in a fresh process: Python
    fetches torch.jit.freeze before the load, so its wrapper is in place
    from `import jitamp` on (_patches.AT_IMPORT), and the frozen copy gives
    the loaded model's bits (which other tests hold to eager's) under a
    caller's float16 autocast, call after call."""
    script_path = tmp_path / "freeze_a_load.py"
    script_path.write_text(_FREEZE_A_LOAD)
    done = subprocess.run([sys.executable, str(script_path), _saved_scoped_linear(tmp_path / "model.pt")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["True"] * 3, done.stdout


def test_every_patch_says_what_pytorch_behaviour_it_answers():
    import threading

    from jitamp import _patches

    patches = [*_patches.AT_IMPORT, *_patches.ON_FIRST_USE, *_patches.while_enabled(print, print, threading.RLock())]
    assert all(isinstance(patch.because, str) and len(patch.because) > 10 for patch in patches), [
        patch for patch in patches if len(getattr(patch, "because", "")) <= 10]


def test_patches_install_all_or_none():
    import types

    from jitamp import _patches

    owner = types.SimpleNamespace(f=len)

    class Fails:
        def install(self):
            raise RuntimeError("no")

        def uninstall(self):
            raise AssertionError("never installed")

    first = _patches.Replace(owner, "f", lambda original: (lambda x: original(x) + 1), because="a test")
    added = _patches.Replace(owner, "g", lambda absent: abs, because="a test")
    try:
        _patches.Installed([first, added, Fails()])
    except RuntimeError:
        pass
    assert owner.f is len and not hasattr(owner, "g")
    installed = _patches.Installed([first, added])
    assert owner.f("ab") == 3 and owner.g is abs
    installed.uninstall()
    assert owner.f is len and not hasattr(owner, "g")


if __name__ == "__main__":
    graph = import_graph()
    for module in sorted(graph):
        print(f"{module} -> {', '.join(sorted(graph[module])) or '-'}")
    found = cycles(graph)
    print("cycles:", found or "none")
    sys.exit(1 if found else 0)


@pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("readelf") is None,
                    reason="reads the ELF dynamic section with readelf (Linux)")
def test_the_libraries_link_libstdcxx_dynamically():
    """A library with its own copy of libstdc++ crashes where objects cross
    into LibTorch's (setup.py's require_shared_libstdcxx refuses to build
    one): both of jitamp's link the shared one, as LibTorch does."""
    import jitamp
    from jitamp import _library

    for path in (jitamp.library_path(), _library._C.__file__):
        needed = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
        assert "libstdc++.so" in needed, path


def test_a_torch_other_than_the_one_built_against_is_one_clear_line():
    """An upgrade of torch after the build: `import jitamp` says both
    versions and the rebuild command (one ImportError line), rather than an
    undefined symbol from the C++ library or a crash later. The build wrote
    the torch it was built against beside the library (setup.py)."""
    import torch

    built_for = os.path.join(PACKAGE, "built_for_torch.txt")
    assert os.path.isfile(built_for), "setup.py writes it at every build"
    with open(built_for) as f:
        assert f.read().strip() == torch.__version__
    code = ("import torch\ntorch.__version__ = '2.99.0+cpu'\n"
            "try:\n    import jitamp\nexcept ImportError as error:\n    print(error)\nelse:\n    print('imported')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (f"jitamp was built against torch {torch.__version__}, and torch 2.99.0+cpu is "
                           "installed: rebuild jitamp against it: pip install --no-build-isolation -e . "
                           "(from jitamp's source)\n"), done.stdout


def test_the_wheel_ships_jitamp_alone():
    """The packages pyproject.toml's find gives the wheel: jitamp's own,
    from python/ (jitamp.testing, the oracle, is a module of jitamp). The
    differential fuzzer is a developer tool in tools/, never shipped."""
    from setuptools.config.pyprojecttoml import read_configuration

    root = os.path.dirname(os.path.dirname(PACKAGE))
    setuptools_config = read_configuration(os.path.join(root, "pyproject.toml"))["tool"]["setuptools"]
    assert setuptools_config["package-dir"] == {"": "python"}
    assert sorted(setuptools_config["packages"]) == ["jitamp", "jitamp.passes"]
    assert os.path.isfile(os.path.join(PACKAGE, "testing.py"))
    assert os.path.isfile(os.path.join(root, "tools", "jitamp_fuzz", "__main__.py"))
