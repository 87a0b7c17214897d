"""Builds jitamp's C++ against the installed torch: two libraries on Linux.

Install torch first (any version jitamp supports, see pyproject.toml), then:
    pip install --no-build-isolation -e .

- jitamp/libjitamp_ops.so, the op library: every .cpp under csrc/jit_autocast/
  (the ops, their kernels and the passes), linked against LibTorch alone, no
  Python. It is the library a C++ host links or preloads
  (LD_PRELOAD=$(jitamp library)); cpp/CMakeLists.txt can build the same set
  from source or take this one (-DJITAMP_OPS_LIBRARY=...).
- jitamp/_C, the Python binding (csrc/python/), linked against the op
  library, found next to it ($ORIGIN).

Elsewhere _C holds both (see below).
"""
import glob
import os
import subprocess
import sys

import torch
from setuptools import Extension, setup
from torch.utils import cpp_extension
from torch.utils.cpp_extension import BuildExtension, CppExtension

SUPPORTED = ((2, 4), (2, 15))  # inclusive; also in pyproject.toml and the README


def torch_version() -> tuple:
    major, minor = torch.__version__.split("+")[0].split(".")[:2]
    return int(major), int(minor)


if not SUPPORTED[0] <= torch_version() <= SUPPORTED[1]:
    raise RuntimeError(
        f"jitamp supports torch {SUPPORTED[0][0]}.{SUPPORTED[0][1]} to "
        f"{SUPPORTED[1][0]}.{SUPPORTED[1][1]}; the installed torch is {torch.__version__}"
    )

here = os.path.dirname(os.path.abspath(__file__))
library = os.path.join("csrc", "jit_autocast")
OPS = "jitamp.libjitamp_ops"
BUILT_FOR = "built_for_torch.txt"
# torch 2.14+ headers need C++20 (2.13's already use C++20 features and warn
# under C++17); every supported torch builds with it. torch's BuildExtension
# adds no -std, and g++ 12 defaults to C++17, so it is always given.
# Python's own compile flags carry -g: debug information made each
# translation unit 3-4 times slower to compile (one pass: 106 s against 30 s
# on an AVX2-only AMD EPYC) and its object 50 times larger, so it is off;
# JITAMP_DEBUG_INFO=1 keeps it (for gdb's source lines).
CXX_FLAGS = ["-O2", "-std=c++20"] + ([] if os.environ.get("JITAMP_DEBUG_INFO") else ["-g0"])


class Build(BuildExtension.with_options(use_ninja=True)):
    """Names the op library as a C++ host expects (libjitamp_ops.so, not a
    Python module's name), and links _C against it where it was just built."""

    def get_ext_filename(self, fullname):
        # Asked with the full name or with its last part, by setuptools'
        # versions.
        if fullname in (OPS, OPS.rpartition(".")[2]):
            return os.path.join(*fullname.split(".")) + ".so"
        return super().get_ext_filename(fullname)

    def run(self):
        super().run()
        # The torch the libraries were built against, read by `import
        # jitamp` before it loads them (_library.py: another torch there is
        # one clear line, not an undefined symbol or a crash later).
        folder = os.path.dirname(self.get_ext_fullpath("jitamp._C"))
        with open(os.path.join(folder, BUILT_FOR), "w") as out:
            out.write(torch.__version__ + "\n")

    def build_extension(self, ext):
        if ext.name != OPS and any(e.name == OPS for e in self.extensions):
            ext.library_dirs.append(os.path.dirname(self.get_ext_fullpath(OPS)))
        super().build_extension(ext)
        if sys.platform.startswith("linux"):
            require_shared_libstdcxx(self.get_ext_fullpath(ext.name))


def require_shared_libstdcxx(path: str) -> None:
    """Refuse a library that carries its own copy of libstdc++ (a compiler
    that links it statically: seen with a wrapper g++ whose -B directory
    holds libstdc++.a alone). LibTorch uses the shared one, and objects that
    cross between the two copies (exceptions, streams, an ErrorReport) crash
    at run time: "free(): invalid pointer" at jitamp's first refusal."""
    try:
        dynamic = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return  # no readelf: not checked
    if "libstdc++.so" not in dynamic:
        os.remove(path)  # else the next build takes it as up to date
        compiler = os.environ.get("CXX", "c++")
        raise RuntimeError(
            f"{os.path.basename(path)} does not link libstdc++.so: the compiler ({compiler}) linked "
            "libstdc++ into it statically, and objects shared with LibTorch's libstdc++ would crash "
            "at run time. Build with a compiler that links it dynamically (e.g. CXX=/usr/bin/g++).")


def unity_sources(sources: list) -> list:
    """One translation unit per room of csrc/jit_autocast (ir/, ops/,
    passes/, pipeline/, and library.cpp at its root), each a generated file
    (build/unity/unity_ROOM.cpp) that #includes the room's .cpp files.

    Parsing torch's headers is nearly all of a unit's compile time: one
    26-line pass takes 19 s, all 26 passes together 56 s (AVX2-only AMD
    EPYC, 2 cores). There, .ci/run's install and build took 9.5-10 minutes
    with one unit per file, and 200 s with one per room. A unit is written
    only when its text changes, so ninja rebuilds only the rooms whose
    files did. JITAMP_UNITY_BUILD=0
    builds one unit per file (a one-file change then rebuilds that file
    alone; it is also how to see that each file includes what it uses)."""
    if os.environ.get("JITAMP_UNITY_BUILD", "1") == "0":
        return sources
    rooms = {}
    for source in sources:
        relative = os.path.relpath(source, library).replace(os.sep, "/")
        room = relative.split("/")[0] if "/" in relative else relative[: -len(".cpp")]
        rooms.setdefault(room, []).append(relative)
    os.makedirs(os.path.join("build", "unity"), exist_ok=True)
    units = []
    for room, files in sorted(rooms.items()):
        text = "// Generated by setup.py (unity_sources): do not edit.\n" + "".join(
            f'#include "{name}"\n' for name in files)
        unit = os.path.join("build", "unity", f"unity_{room}.cpp")
        if not os.path.exists(unit) or _read(unit) != text:
            with open(unit, "w") as out:
                out.write(text)
        units.append(unit)
    return units


def _read(path: str) -> str:
    with open(path) as f:
        return f.read()


# Every .cpp under csrc/jit_autocast (its rooms ir/, ops/, passes/,
# pipeline/ and library.cpp), found, not listed, compiled room by room.
OPS_SOURCES = unity_sources(sorted(glob.glob(os.path.join(library, "**", "*.cpp"), recursive=True)))
BINDING_SOURCES = [os.path.join("csrc", "python", "bindings.cpp")]

if sys.platform.startswith("linux"):
    extensions = [
        # Built first: _C links against it.
        Extension(
            OPS,
            OPS_SOURCES,
            include_dirs=[os.path.join(here, library)] + cpp_extension.include_paths(),
            library_dirs=cpp_extension.library_paths(),
            # LibTorch alone (no torch_python): a C++ host has no Python.
            libraries=["c10", "torch", "torch_cpu"],
            extra_compile_args=CXX_FLAGS,
            language="c++",
        ),
        CppExtension(
            "jitamp._C",
            BINDING_SOURCES,
            include_dirs=[os.path.join(here, library)],
            libraries=["jitamp_ops"],
            extra_compile_args=CXX_FLAGS,
            extra_link_args=["-Wl,-rpath,$ORIGIN"],
        ),
    ]
else:
    # Elsewhere (untested: the tests run on Linux) setuptools links Python
    # extensions as bundles no other library can link against, and $ORIGIN
    # is Linux's: one extension holds everything, as torch extensions do,
    # and there is no separate op library (jitamp.library_path() says so).
    extensions = [
        CppExtension(
            "jitamp._C",
            OPS_SOURCES + BINDING_SOURCES,
            include_dirs=[os.path.join(here, library)],
            extra_compile_args=CXX_FLAGS,
        ),
    ]

setup(ext_modules=extensions, cmdclass={"build_ext": Build})
