"""The Python side of jitamp's pipeline.

The graph work is one C++ pass (csrc/jit_autocast/jitamp_rewrite.cpp); this
package orders it and exposes the policy table for checks.
"""
from __future__ import annotations

import torch

from .._library import _C
from .policy import dispatcher_autocast_ops, policy_table


def rewrite_graph(graph: torch._C.Graph) -> bool:
    """Rewrite one graph in place (scopes and smart casts).

    Callees are not followed: use jitamp.rewrite on functions and modules.
    Returns whether the graph changed.
    """
    return _C.rewrite_graph(graph)


__all__ = ["rewrite_graph", "policy_table", "dispatcher_autocast_ops"]
