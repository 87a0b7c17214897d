"""The Python face of jitamp's passes.

The graph work is C++ (csrc/jit_autocast/): `rewrite_graph` runs the whole
pipeline (jitamp_rewrite.h), in this order:

    record_autocast_cache_flags -> lower_autocast_scopes
        -> make_waits_blocking -> carry_autocast_into_tasks
        -> insert_smart_casts

On frozen graphs, `fold_static_casts` then does the casts of frozen
weights whose autocast state the graph fixes, and `strip_static_scopes`
(standalone freezing) removes every jitamp op where all scopes are static
(FROZEN).

How a rewritten function runs is set with it, graph included:
`keep_loops_out_of_line` (a workaround for TorchScript's interpreter, run
on every function jitamp configures, autocast or not).

Each pass is also callable on its own, for tests and for looking at what
one step does. The policy table that insert_smart_casts reads is in
`policy`.
"""
from __future__ import annotations

from typing import Callable

import torch

from .._library import _C
from .policy import dispatcher_autocast_ops, ops_missing_from_table, policy_table

#: The pipeline's passes, in the order rewrite_graph runs them.
PIPELINE: tuple[tuple[str, Callable[[torch._C.Graph], bool]], ...] = (
    ("record_autocast_cache_flags", _C.record_autocast_cache_flags),
    ("lower_autocast_scopes", _C.lower_autocast_scopes),
    ("make_waits_blocking", _C.make_waits_blocking),
    ("carry_autocast_into_tasks", _C.carry_autocast_into_tasks),
    ("insert_smart_casts", _C.insert_smart_casts),
)


#: Passes on frozen graphs, after the pipeline: torch.jit.freeze of a
#: rewritten module runs fold_static_casts on every method;
#: jitamp.freeze(standalone=True) then strip_static_scopes (where
#: static_scope_obstacles finds none).
FROZEN: tuple[tuple[str, Callable[[torch._C.Graph], bool]], ...] = (
    ("fold_static_casts", _C.fold_static_casts),
    ("strip_static_scopes", _C.strip_static_scopes),
)
static_scope_obstacles = _C.static_scope_obstacles
keep_loops_out_of_line = _C.keep_loops_out_of_line


def rewrite_graph(graph: torch._C.Graph) -> bool:
    """Run the whole pipeline on one graph in place (and on the subgraphs of
    its forks). Callees are not followed: use jitamp.rewrite on functions
    and modules. Returns whether the graph changed."""
    return _C.rewrite_graph(graph)


__all__ = [
    "PIPELINE",
    "FROZEN",
    "static_scope_obstacles",
    "keep_loops_out_of_line",
    "rewrite_graph",
    "policy_table",
    "dispatcher_autocast_ops",
    "ops_missing_from_table",
]
