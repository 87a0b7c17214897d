"""jitamp: `with torch.autocast(...)` in TorchScript that does what eager does.

    import jitamp
    jitamp.enable()            # before torch.jit.script(...)
    scripted = torch.jit.script(model)

Every function and module method scripted while jitamp is enabled is
rewritten once, before it first runs. `jitamp.rewrite(obj)` does the same for
objects scripted earlier or loaded with `torch.jit.load`; `jitamp.load(path)`
does both for a saved model. `jitamp.add_autocast(module, "cpu", torch.bfloat16)`
gives a module whose source has no autocast mixed precision, as if its
forward were inside `with torch.autocast(...)`. `jitamp.freeze(module)` (or
torch.jit.freeze of a rewritten module) casts frozen weights once where the
scope's autocast state is static. `jitamp.library_path()` is the op library
a C++ host links or preloads (README, "C++ deployment"). `jitamp.export(model,
args)` makes a scripted or loaded model a torch.export ExportedProgram with
eager's autocast, as torch.export's own autocast regions or, with
explicit_casts=True, every cast written out (README, "Moving off
TorchScript"); `jitamp.export_onnx(model, args)` and `jitamp.export_executorch(model,
args)` make it an ONNX model or an ExecuTorch program with eager's casts.
"""
from . import _patches
from ._library import _C  # noqa: F401  (registers the jitamp ops)
from ._library import library_path
from ._export import ExportError, export
from ._runtimes import export_executorch, export_onnx
from .api import add_autocast, disable, enable, freeze, is_enabled, load, rewrite
from .passes import rewrite_graph

_patches.install_at_import()  # what `import jitamp` changes in torch, and its first use: _patches.py

__all__ = ["enable", "disable", "is_enabled", "load", "rewrite", "add_autocast", "freeze", "rewrite_graph",
           "library_path", "export", "export_onnx", "export_executorch", "ExportError"]
__version__ = "0.1.0"
