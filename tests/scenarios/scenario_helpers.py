"""What the scenario tests (tests/scenarios/) share: inputs, the eager regions
a scripted call runs in, and the warnings scenarios expect.

Every scenario goes through `oracle.check_against_eager`, which scripts the
function (or takes a scripted module) with jitamp enabled and compares it with
the same Python code run eagerly on calls 1, 2, 3 and 10: outputs (dtype and
bitwise values), raised errors, gradients (grad=True) and the thread's
autocast state after every call. Eager autocast is the oracle, so no scenario
hard-codes an expected dtype.

TorchScript reads a scripted function's source: module-level functions and
functions nested in a test both work (names resolve through the closure and
the module's globals).
"""
import pytest
import torch
from torch import Tensor

from oracle import cpu_autocast

WARNING_FILTERS = [
    # torch.autocast("cuda") / torch.cuda.amp.autocast() on a machine without
    # CUDA: eager warns and disables the scope (jitamp warns the same way).
    pytest.mark.filterwarnings("ignore:.*CUDA is not available.*:UserWarning"),
    # torch.autocast("cpu", dtype=torch.float32): eager warns and disables.
    pytest.mark.filterwarnings("ignore:.*target dtype is not supported.*:UserWarning"),
    # torch.cpu.amp.autocast / torch.cuda.amp.autocast are deprecated spellings.
    pytest.mark.filterwarnings("ignore:.*amp.autocast.*is deprecated.*:FutureWarning"),
    pytest.mark.filterwarnings("ignore:.*is deprecated.*:DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:.*is_autocast_cpu_enabled.*:FutureWarning"),
    pytest.mark.filterwarnings("ignore:.*is_autocast_enabled.*:FutureWarning"),
]


def rand(*shape: int, dtype: torch.dtype = torch.float32, seed: int = 0) -> Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(dtype)


X = rand(4, 4, seed=1)
Y = rand(4, 4, seed=2)

# The eager region both sides are called in (an `outer=` of the oracle), by
# the id tests are parametrized with.
OUTERS = {
    "no_outer": None,
    "outer_bf16": cpu_autocast(torch.bfloat16),
    "outer_fp16": cpu_autocast(torch.float16),
    "outer_disabled": cpu_autocast(torch.bfloat16, enabled=False),
}
OUTER_IDS = list(OUTERS)


def outer_cache_off():
    return torch.autocast("cpu", dtype=torch.bfloat16, cache_enabled=False)


def odd(i: int) -> bool:
    """A flag that alternates between calls (args_for_call): True on call 1."""
    return i % 2 == 1
