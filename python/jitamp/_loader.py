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

A scripted function has no attributes: `torch.jit.save` saves it as a
module whose forward is the function. For a function jitamp rewrote, that
module gets the loader too (`ScriptFunction.save` and `save_to_buffer` are
wrapped; other functions save as torch saves them).

Loading needs jitamp's ops: `import jitamp` in Python, or a C++ program
linked with the jitamp_ops library.

rewrite_module / rewrite_function are jitamp's rewrite with that object;
the wrappers of torch's functions here (freeze, optimize_for_inference,
ScriptFunction.save, create_script_module_impl) are installed by
jitamp/_patches.py.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import torch
from torch import _jit_internal

from ._library import _C

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


def _loader_type() -> torch._C.ClassType:
    """ModelLoader's TorchScript class, scripted on first use (not at
    import: torch.jit.script warns), and again after a registry clear.

    torch._C._jit_clear_class_registry() (PyTorch's JitTestCase runs it
    between tests) frees the methods of every scripted class while a type
    kept from before still points at them: a model saved with such a type
    held other functions' code under ModelLoader's name and did not load.
    So the class is looked up in the registry at each use."""
    registry = torch.jit._state._python_cu
    name = _jit_internal._qualified_name(ModelLoader)
    loader_type = registry.get_class(name)
    if loader_type is None:
        # torch.jit.script would return the class it scripted before the
        # clear, which the Python side still holds.
        torch.jit._state._script_classes.pop(ModelLoader, None)
        torch.jit.script(ModelLoader)
        loader_type = registry.get_class(name)
    if loader_type is None:
        raise RuntimeError(f"jitamp: TorchScript holds no class {name} after scripting it")
    return loader_type


def attach(module: torch._C.ScriptModule, simple_executor: bool) -> None:
    """Give `module` (the C++ object) the loader attribute, once.

    Only a module whose type lacks the attribute gets it: adding an
    attribute to a type changes every object of that type, and objects made
    earlier would lack the slot.
    """
    # A Python ModelLoader becomes a TorchScript object of its class here.
    if not module.hasattr(ATTRIBUTE):
        module._register_attribute(ATTRIBUTE, _loader_type(), ModelLoader(simple_executor))
        _executors[module._type().qualified_name()] = simple_executor
    else:  # an object of a type that got the attribute with another object
        fill(module)


def _loader_of(module: torch._C.ScriptModule) -> ModelLoader | None:
    """The module's loader object, None where its slot is empty. (Python
    gets a TorchScript object only of a class its own compilation unit
    has: a model loaded in a fresh process holds one of the loaded unit's.)"""
    _loader_type()
    return module.getattr(ATTRIBUTE)


# How the functions of each module type that got the attribute run (the
# simple executor or not), by the type's qualified name.
_executors: dict[str, bool] = {}


def fill(module: torch._C.ScriptModule) -> None:
    """Give `module` its loader object where its slot is empty: an object
    that torch.jit.script made of a module type it had compiled for an
    earlier object reuses that type, methods and attribute slots, without
    calling the emit hooks again, and the slot stays None. Saved so, no
    loader would configure the model: torch.jit.load ran it with PyTorch's
    built-in JIT autocast (bfloat16 where eager gives float32 behind a
    scripted `enabled=False` scope). Submodules' are the caller's."""
    if module.hasattr(ATTRIBUTE) and _loader_of(module) is None:
        simple = _executors.get(module._type().qualified_name())
        if simple is not None:
            module.setattr(ATTRIBUTE, ModelLoader(simple))


# How each scripted function jitamp rewrote runs (the simple executor or
# not), by its qualified name (unique in the Python compilation unit).
_function_executors: dict[str, bool] = {}


def record_function(function: torch._C.ScriptFunction, simple_executor: bool) -> None:
    """Remember that jitamp rewrote `function`: saved, it gets a loader."""
    _function_executors[function.qualified_name] = simple_executor


def rewrite_module(module: torch._C.ScriptModule, simple_executor: bool) -> list[str]:
    """jitamp's rewrite of every method of `module` (the C++ object) and
    what they call, then its loader object. Returns the qualified names of
    the functions whose graphs changed."""
    changed = _C.rewrite_module(module, simple_executor=simple_executor)
    attach(module, simple_executor)
    return list(changed)


def rewrite_function(function: torch._C.ScriptFunction, simple_executor: bool) -> list[str]:
    """jitamp's rewrite of a scripted function and what it calls; saved, it
    gets a loader object. Returns what rewrite_module does."""
    changed = _C.rewrite_function(function, simple_executor=simple_executor)
    record_function(function, simple_executor)
    return list(changed)


def _as_module(function: torch._C.ScriptFunction) -> torch._C.ScriptModule | None:
    """The module torch.jit.save saves for `function`, with the loader
    attribute, where jitamp rewrote the function; else None."""
    simple = _function_executors.get(function.qualified_name)
    if simple is None:
        return None
    module = _C.function_as_module(function)
    attach(module, simple)
    return module


def saving_with_a_loader(method: Callable[..., Any]) -> Callable[..., Any]:
    """torch._C.ScriptFunction.save / save_to_buffer, for jitamp/_patches.py.

    torch.jit.save of a scripted function saves a module whose forward is
    the function (torch's `ScriptFunction.save`), which no loader would
    configure: torch.jit.load ran a rewritten function on the profiling
    executor, whose DecomposeOps split a bfloat16 addmm into mm + add
    (rounding twice) from the first call. For a function jitamp rewrote,
    the module saved is the same one with the loader attribute."""

    @functools.wraps(method)
    def with_loader(self: Any, *args: Any, **kwargs: Any) -> Any:
        module = _as_module(self)
        if module is None:
            return method(self, *args, **kwargs)
        return getattr(module, method.__name__)(*args, **kwargs)

    return with_loader


def filling_loader_slots(create: Callable[..., Any]) -> Callable[..., Any]:
    """torch.jit._recursive.create_script_module_impl while jitamp is
    enabled (jitamp/_patches.py): torch.jit.script fills the loader slots of
    each module object it makes (fill)."""

    @functools.wraps(create)
    def create_and_fill(nn_module: Any, concrete_type: Any, stubs_fn: Any) -> Any:
        scripted = create(nn_module, concrete_type, stubs_fn)
        fill(scripted._c)  # submodules: by the recursion, through here
        return scripted

    return create_and_fill


def _simple_executor_of(module: torch._C.ScriptModule) -> bool | None:
    """How a jitamp module runs (its loader's setting), or None for a module
    jitamp has not rewritten."""
    if not module.hasattr(ATTRIBUTE):
        return None
    loader = _loader_of(module)
    if loader is None:
        return _executors.get(module._type().qualified_name())
    return bool(loader.simple_executor)


def plain_freeze(module: Any, **kwargs: Any) -> Any:
    """torch.jit.freeze as torch has it, without jitamp's freeze pipeline
    (freezing_rewritten)."""
    return getattr(torch.jit.freeze, "__wrapped__", torch.jit.freeze)(module, **kwargs)


def freezing_rewritten(freeze: Callable[..., Any]) -> Callable[..., Any]:
    """torch.jit.freeze, for jitamp/_patches.py.

    torch.jit.freeze clones a module into new functions, which run as
    TorchScript's defaults say: PyTorch's built-in JIT autocast would then
    run on a frozen jitamp model at its first call under an eager autocast
    (float16 where eager gives float32 behind a scripted enabled=False
    scope). The copy of a module jitamp rewrote goes through the freeze
    pipeline (csrc/jit_autocast/pipeline/pipeline.h: rewritten as
    jitamp.rewrite() does, then each cast of a frozen weight whose autocast
    state the graph fixes done once) and gets the loader object."""

    @functools.wraps(freeze)
    def freeze_and_rewrite(mod, *args, **kwargs):
        frozen = freeze(mod, *args, **kwargs)
        simple = _simple_executor_of(mod._c) if hasattr(mod, "_c") else None
        if simple is not None:
            _C.freeze_module(frozen._c, simple_executor=simple)
            attach(frozen._c, simple)
        return frozen

    return freeze_and_rewrite


def optimizing_rewritten(optimize: Callable[..., Any]) -> Callable[..., Any]:
    """torch.jit.optimize_for_inference, for jitamp/_patches.py.

    For a module jitamp rewrote, what torch's does (torch/jit/_freeze.py:
    freeze unless frozen, then its passes), with the optimize_for_inference
    pipeline in place of its passes: the freeze pipeline with those passes
    between the rewrite and the fold, so that they see each weight behind
    its cast (pipeline.h). A module frozen already has had its fold
    (torch.jit.freeze is freezing_rewritten): torch's passes would now
    repack and transpose the cast weights, whose numerics are then not
    eager's, so it gets the freeze pipeline alone (nothing left to do where
    that folded it), as optimizing it unfrozen would leave it."""

    @functools.wraps(optimize)
    def optimize_rewritten(mod, other_methods=None):
        simple = _simple_executor_of(mod._c) if isinstance(mod, torch.jit.ScriptModule) else None
        if simple is None:
            return optimize(mod, other_methods)
        other_methods = [] if other_methods is None else other_methods
        if hasattr(mod, "training"):  # not frozen yet
            mod = plain_freeze(mod.eval(), preserved_attrs=other_methods)
            _C.optimize_for_inference(mod._c, simple_executor=simple, other_methods=other_methods)
        else:
            _C.freeze_module(mod._c, simple_executor=simple)
        attach(mod._c, simple)
        return mod

    return optimize_rewritten
