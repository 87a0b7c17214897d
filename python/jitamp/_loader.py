"""The object a rewritten model carries so that any loader runs it as jitamp does.

How a TorchScript function runs (jitamp sets TorchScript's simple executor
and keeps PyTorch's built-in JIT autocast away) is not saved with a model:
`torch.jit.load` / `torch::jit::load` compile its code afresh with the
defaults. So `jitamp.rewrite()` and the emit hooks give the module an
attribute `_jitamp_loader` holding a `ModelLoader`. Its `__setstate__`,
which the unpickler of every loader runs while it loads the model (after
compiling its code, before any of it can run), calls
`jitamp::prepare_loaded`: that rewrites (idempotently) and configures every
function of the loaded model, as `jitamp.rewrite()` does.

Loading needs jitamp's ops: `import jitamp` in Python, or a C++ program
linked with the jitamp_ops library.
"""
from __future__ import annotations

import functools

import torch

ATTRIBUTE = "_jitamp_loader"


class ModelLoader:
    def __init__(self, simple_executor: bool):
        self.simple_executor = simple_executor

    def __getstate__(self) -> bool:
        return self.simple_executor

    # The argument's name is what a load without jitamp's ops shows:
    # "Unknown builtin op: jitamp::prepare_loaded" and this line.
    def __setstate__(self, needs_import_jitamp: bool) -> None:
        self.simple_executor = needs_import_jitamp
        torch.ops.jitamp.prepare_loaded(self, needs_import_jitamp)


@functools.lru_cache(maxsize=None)
def _loader_type() -> torch._C.ClassType:
    # Scripted on first use, not at import: torch.jit.script warns.
    from torch._sources import fake_range
    from torch.jit.annotations import ann_to_type

    torch.jit.script(ModelLoader)
    return ann_to_type(ModelLoader, fake_range())


def attach(module: torch._C.ScriptModule, simple_executor: bool) -> None:
    """Give `module` (the C++ object) the loader attribute, once.

    Only a module whose type lacks the attribute gets it: adding an
    attribute to a type changes every object of that type, and objects made
    earlier would lack the slot.
    """
    if module.hasattr(ATTRIBUTE):
        return
    # A Python ModelLoader becomes a TorchScript object of its class here.
    module._register_attribute(ATTRIBUTE, _loader_type(), ModelLoader(simple_executor))


def _simple_executor_of(module: torch._C.ScriptModule) -> bool | None:
    """How a jitamp module runs (its loader's setting), or None for a module
    jitamp has not rewritten."""
    if not module.hasattr(ATTRIBUTE):
        return None
    return bool(module.getattr(ATTRIBUTE).simple_executor)


def _keep_frozen_modules_rewritten() -> None:
    """torch.jit.freeze clones a module into new functions, which run as
    TorchScript's defaults say: PyTorch's built-in JIT autocast would then
    run on a frozen jitamp model at its first call under an eager autocast
    (float16 where eager gives float32 behind a scripted enabled=False
    scope). Freezing a module jitamp rewrote rewrites the frozen copy too, as
    jitamp.rewrite() does (optimize_for_inference freezes through the same
    function)."""
    from torch.jit import _freeze

    freeze = _freeze.freeze
    if getattr(freeze, "_jitamp_rewrites", False):
        return

    @functools.wraps(freeze)
    def freeze_and_rewrite(mod, *args, **kwargs):
        frozen = freeze(mod, *args, **kwargs)
        simple = _simple_executor_of(mod._c) if hasattr(mod, "_c") else None
        if simple is not None:
            from .api import rewrite

            rewrite(frozen, profiling_executor=not simple)
        return frozen

    freeze_and_rewrite._jitamp_rewrites = True  # type: ignore[attr-defined]
    _freeze.freeze = freeze_and_rewrite
    if torch.jit.freeze is freeze:
        torch.jit.freeze = freeze_and_rewrite


_keep_frozen_modules_rewritten()
