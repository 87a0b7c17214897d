"""jitamp's passes, as the C++ pipeline lists them.

Every sequence of passes jitamp runs is written once, in
csrc/jit_autocast/pipeline/pipeline.cpp; `PIPELINES` is read from there
(`jitamp passes` prints it, docs/passes.md shows it). `run(names, graph)`
runs graph passes of the list alone, `run_pipeline(name, graph)` one graph
pipeline and `run_on_module(names, frozen)` steps of the freeze pipelines
(MODULE_PIPELINES),
as `jitamp opt` does for IR tests and for looking at what one step does. The policy
table that insert_smart_casts reads is in `policy`.
"""
from __future__ import annotations

from typing import NamedTuple, Sequence

import torch

from .._library import _C
from .policy import dispatcher_autocast_ops, ops_missing_from_table, policy_table


class Step(NamedTuple):
    pipeline: str
    name: str
    header: str  # where the pass is, under csrc/jit_autocast/ (or torch's)
    on_graph: bool  # run() takes it (a module step may run a graph pass on each method)
    on_model: bool  # a step of a freeze pipeline, which runs on a frozen model


#: Every step jitamp runs, pipelines in the order they apply, steps in order.
STEPS: tuple[Step, ...] = tuple(Step(*row) for row in _C.pipeline_steps())

#: Pipeline name -> its pass names, in order.
PIPELINES: dict[str, tuple[str, ...]] = {}
for _step in STEPS:
    PIPELINES[_step.pipeline] = PIPELINES.get(_step.pipeline, ()) + (_step.name,)
del _step

#: The graph passes run() takes.
GRAPH_PASSES: frozenset[str] = frozenset(step.name for step in STEPS if step.on_graph)


#: The freeze pipelines, which run on a frozen model (run_on_module()
#: takes their steps).
MODULE_PIPELINES: tuple[str, ...] = tuple(dict.fromkeys(step.pipeline for step in STEPS if step.on_model))

#: The graph pipelines run_pipeline() takes.
GRAPH_PIPELINES: tuple[str, ...] = tuple(name for name in PIPELINES if name not in MODULE_PIPELINES)


def run(names: str | Sequence[str], graph: torch._C.Graph) -> bool:
    """Run the graph pass `names` (one of GRAPH_PASSES), or several in
    order, on `graph` in place, as one run. Returns whether they changed it."""
    return _C.run_passes([names] if isinstance(names, str) else list(names), graph)


def run_pipeline(name: str, graph: torch._C.Graph) -> torch._C.Graph:
    """Run the graph pipeline `name` (one of GRAPH_PIPELINES) on `graph` as
    jitamp runs it: in place, or on a copy for "preoptimize" and the plans.
    Returns the graph it made."""
    return _C.run_pipeline(name, graph)


def run_on_module(names: Sequence[str], frozen: torch.jit.ScriptModule, *,
                  simple_executor: bool = True) -> None:
    """Run steps of the freeze pipelines (MODULE_PIPELINES), in order, on
    `frozen`, a module torch.jit.freeze made."""
    _C.run_module_passes(list(names), frozen._c, simple_executor)


def graph_nodes(graph: torch._C.Graph) -> list[torch._C.Node]:
    """Every node of `graph`, those in blocks included, in program order
    (a node before the nodes of its blocks)."""
    nodes: list[torch._C.Node] = []

    def collect(block: torch._C.Block) -> None:
        for node in block.nodes():
            nodes.append(node)
            for sub in node.blocks():
                collect(sub)

    collect(graph.block())
    return nodes


def rewrite_graph(graph: torch._C.Graph) -> bool:
    """Run the "rewrite" pipeline on one graph in place (and on the subgraphs
    of its forks). Callees are not followed: use jitamp.rewrite on functions
    and modules. Returns whether the graph changed."""
    return _C.rewrite_graph(graph)


def markdown() -> str:
    """The pass list as docs/passes.md shows it."""
    lines = []
    for pipeline, names in PIPELINES.items():
        lines.append(f"- **{pipeline}**:")
        for step in (s for s in STEPS if s.pipeline == pipeline):
            lines.append(f"  - `{step.name}` (`{step.header}`)")
    return "\n".join(lines)


static_scope_obstacles = _C.static_scope_obstacles

__all__ = [
    "STEPS",
    "PIPELINES",
    "GRAPH_PASSES",
    "Step",
    "GRAPH_PIPELINES",
    "MODULE_PIPELINES",
    "run",
    "run_pipeline",
    "run_on_module",
    "rewrite_graph",
    "markdown",
    "static_scope_obstacles",
    "policy_table",
    "dispatcher_autocast_ops",
    "ops_missing_from_table",
]
