"""TorchScript's deprecation warning, silenced where jitamp itself calls
torch.jit (the CLI's commands, the bundled example, the tests' oracle).

torch.jit.script/save/load/trace/freeze/optimize_for_inference warn that
TorchScript is deprecated on every call: DeprecationWarning on torch 2.13,
FutureWarning (shown by default) from 2.14. jitamp's API does not silence
it for its users.
"""
from __future__ import annotations

import contextlib
import warnings
from typing import Iterator

TORCHSCRIPT_DEPRECATION = r"`torch\.jit\.\w+` is deprecated"


@contextlib.contextmanager
def torchscript_deprecation_ignored() -> Iterator[None]:
    """A warnings.catch_warnings() block that ignores TorchScript's
    deprecation warning (both categories) and nothing else."""
    with warnings.catch_warnings():
        for category in (DeprecationWarning, FutureWarning):
            warnings.filterwarnings("ignore", message=TORCHSCRIPT_DEPRECATION, category=category)
        yield
