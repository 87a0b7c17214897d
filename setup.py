"""Builds jitamp._C, the C++ passes and ops, against the installed torch.

Install torch first (any version jitamp supports, see pyproject.toml), then:
    pip install --no-build-isolation -e .

The op library is every .cpp in csrc/jit_autocast/ (cpp/CMakeLists.txt
builds the same set for C++ deployment); csrc/python/ adds the Python
binding.
"""
import glob
import os

import torch
from setuptools import setup
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
sources = sorted(glob.glob(os.path.join(library, "*.cpp"))) + [
    os.path.join("csrc", "python", "bindings.cpp")
]

setup(
    ext_modules=[
        CppExtension(
            "jitamp._C",
            sources,
            include_dirs=[os.path.join(here, library)],
            # torch 2.14+ headers need C++20 (2.13's already use C++20
            # features and warn under C++17); every supported torch builds
            # with it. torch's BuildExtension adds no -std, and g++ 12
            # defaults to C++17, so it is always given.
            extra_compile_args=["-O2", "-std=c++20"],
        )
    ],
    cmdclass={"build_ext": BuildExtension.with_options(use_ninja=True)},
)
