"""Builds jitamp._C, the C++ pass and ops, against the installed torch.

Install torch first (pinned in pyproject.toml), then:
    pip install --no-build-isolation -e .
"""
import glob
import os

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension

sources = sorted(glob.glob(os.path.join("csrc", "jit_autocast", "*.cpp")))

setup(
    ext_modules=[
        CppExtension(
            "jitamp._C",
            sources,
            extra_compile_args=["-O2", "-std=c++17"],
        )
    ],
    cmdclass={"build_ext": BuildExtension.with_options(use_ninja=True)},
)
