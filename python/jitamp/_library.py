"""Loads jitamp's compiled library, which registers the jitamp:: ops."""
import atexit
import os

import torch  # (libtorch must be loaded before our library)

_REBUILD = "pip install --no-build-isolation -e . (from jitamp's source)"


def _check_built_for_the_installed_torch() -> None:
    """C++ built against one torch does not load into another (undefined
    symbols), or loads and crashes later: setup.py writes the torch it built
    against beside the libraries, and another torch is refused here."""
    try:
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "built_for_torch.txt")) as f:
            built_for = f.read().strip()
    except OSError:
        return  # (built without setup.py: not known)
    if built_for.split("+")[0] != str(torch.__version__).split("+")[0]:
        raise ImportError(f"jitamp was built against torch {built_for}, and torch {torch.__version__} is "
                          f"installed: rebuild jitamp against it: {_REBUILD}")


_check_built_for_the_installed_torch()
try:
    from . import _C
except ImportError as error:  # pragma: no cover - depends on the install
    raise ImportError(
        "jitamp's compiled library could not be loaded "
        f"({error}). Build it against the installed torch "
        f"({torch.__version__}): {_REBUILD}"
    ) from error


def library_path() -> str:
    """The path of libjitamp_ops.so, jitamp's op library without Python
    (the ops, their kernels and the passes; _C, the Python binding, links
    it): what a C++ host links or preloads to run models jitamp rewrote,
    e.g. LD_PRELOAD=$(jitamp library) tritonserver ... It was built against
    the installed torch, and must be loaded by the same LibTorch."""
    path = os.path.join(os.path.dirname(os.path.abspath(_C.__file__)), "libjitamp_ops.so")
    if not os.path.isfile(path):
        raise RuntimeError(
            f"this install of jitamp has no separate op library ({path}): only Linux builds "
            "build one (setup.py); build jitamp_ops from source with cpp/CMakeLists.txt")
    return path


def _tell_the_pass_what_eager_enter_returns() -> bool:
    """`with torch.autocast(...) as ac` binds None in eager before torch 2.5
    (lower_autocast_scopes.h): ask eager, and what `with None:` raises.
    Returns whether it binds None."""
    probe = torch.autocast("cpu", enabled=False)
    bound = probe.__enter__()
    probe.__exit__(None, None, None)
    try:
        with None:  # type: ignore[attr-defined]
            pass
    except Exception as error:
        cls, message = type(error), str(error)
    _C.set_eager_enter_result(
        bound is None, f"{cls.__module__}.{cls.__qualname__}", message)
    return bound is None


EAGER_ENTER_RETURNS_NONE = _tell_the_pass_what_eager_enter_returns()


def _eager_scope_check(device: str, dtype: torch.dtype, enabled: bool) -> bool:
    """Eager's autocast.__init__, for a scripted scope of a device type other
    than CPU and CUDA (scope_ops.h, SetEagerScopeCheck): its checks differ
    by device, backend and torch version. Returns whether the scope is
    enabled; warns and raises as eager does."""
    return torch.autocast(device, dtype=dtype, enabled=enabled)._enabled


_C.set_eager_scope_check(_eager_scope_check)

# Before Python finalizes, the inter-op threads let go of finished tasks
# (at most 2 s): else one that drops a tensor Python has seen takes the GIL
# while Python finalizes, and the process aborts (task_ops.h,
# WaitForTaskThreads).
atexit.register(_C.wait_for_task_threads, 2000)
