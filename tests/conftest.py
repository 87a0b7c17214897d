import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(__file__))

from oracle import TORCHSCRIPT_DEPRECATION  # noqa: E402

# TorchScript's deprecation warning at import time (e.g. of @torch.jit.script
# helpers); pyproject's filterwarnings covers it while tests run.
for _category in (DeprecationWarning, FutureWarning):
    warnings.filterwarnings("ignore", message=TORCHSCRIPT_DEPRECATION, category=_category)
