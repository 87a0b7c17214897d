"""Loads jitamp's compiled library, which registers the jitamp:: ops."""
import torch  # noqa: F401  (libtorch must be loaded before our library)

try:
    from . import _C
except ImportError as error:  # pragma: no cover - depends on the install
    raise ImportError(
        "jitamp's compiled library could not be loaded "
        f"({error}). Build it against the installed torch "
        f"({torch.__version__}): pip install --no-build-isolation -e ."
    ) from error
