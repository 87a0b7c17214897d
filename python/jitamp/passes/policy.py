"""The op policy table, and what the installed torch's dispatcher says."""
from __future__ import annotations

from typing import NamedTuple

import torch

from .._library import _C

_DISPATCH_KEYS = {"cpu": "AutocastCPU", "cuda": "AutocastCUDA"}


class OpPolicy(NamedTuple):
    op: str  # "aten::conv2d.padding"
    cpu: str  # "lower_precision_fp", "fp32", ..., or "none"
    cuda: str
    cpu_implied: bool  # no kernel of its own; eager reaches one through it
    cuda_implied: bool

    def policy(self, device: str) -> str:
        return self.cpu if device == "cpu" else self.cuda

    def implied(self, device: str) -> bool:
        return self.cpu_implied if device == "cpu" else self.cuda_implied


def policy_table() -> list[OpPolicy]:
    return [OpPolicy(*row) for row in _C.policy_table()]


def dispatcher_autocast_ops(device: str) -> set[str]:
    """Ops with an autocast kernel for `device` ("cpu" or "cuda") in torch."""
    key = _DISPATCH_KEYS[device]
    return {
        name
        for name in torch._C._dispatch_get_all_op_names()
        if torch._C._dispatch_has_kernel_for_dispatch_key(name, key)
    }
