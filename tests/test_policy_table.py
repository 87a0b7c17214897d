"""The policy table against the installed torch.

The installed torch's dispatcher decides which rows apply (a row for an op
torch does not autocast would change results); the generator
(tools/gen_policy_table.py, tests/test_policy_generator.py) decides each
row's policy. These tests fail when the effective table and the dispatcher
disagree, and show that jitamp still equals eager when the table and the
dispatcher differ (simulated).
"""
import os
import re
import warnings

import pytest
import torch

import jitamp
from jitamp import _C
from jitamp.passes import dispatcher_autocast_ops, ops_missing_from_table, policy_table
from oracle import check_against_eager, cpu_autocast, script

GENERATED = os.path.join(
    os.path.dirname(__file__), "..", "csrc", "jit_autocast", "policy_table_generated.inc"
)


def generated_from() -> list[str]:
    """The torch versions the generated rows come from (the file's header)."""
    with open(GENERATED) as f:
        header = f.readline()
    match = re.search(r"from torch (.*?) --", header)
    assert match, f"no version list in {GENERATED}'s first line: {header!r}"
    return [v.strip() for v in match.group(1).split(",")]


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_effective_table_is_the_dispatchers_op_set(device):
    effective = {
        row.op for row in policy_table() if row.effective(device) != "none" and not row.implied
    }
    known = dispatcher_autocast_ops(device) - set(ops_missing_from_table(device))
    assert effective - known == set(), f"effective, not autocast by torch: {sorted(effective - known)}"
    assert known - effective == set(), f"autocast by torch, not effective: {sorted(known - effective)}"


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_no_op_missing_on_a_torch_the_table_was_generated_from(device):
    if torch.__version__ not in generated_from():
        pytest.skip(f"torch {torch.__version__} is not among {generated_from()}: missing ops are allowed")
    assert ops_missing_from_table(device) == []


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_rows_torch_does_not_autocast_are_not_used(device):
    dispatcher = dispatcher_autocast_ops(device)
    for row in policy_table():
        checked = row.via or row.op
        if checked not in dispatcher:
            assert row.effective(device) == "none", row
        else:
            assert row.effective(device) == row.policy(device), row


def test_implied_rows_are_ops_torchscript_calls():
    implied = [r for r in policy_table() if r.implied]
    assert implied, "expected rows for ops TorchScript reaches by another name"
    for row in implied:
        name, _, overload = row.op.partition(".")
        packet = getattr(torch.ops.aten, name.split("::")[1])
        assert (overload or "default") in packet.overloads(), row.op


def test_lookup_keys_are_unique():
    ops = [r.op for r in policy_table()]
    assert len(ops) == len(set(ops))


# --- the table and the dispatcher differ (simulated) -------------------------


@pytest.fixture
def pretend():
    """pretend(op, device, has_kernel): what the table check sees; undone after."""
    done = []

    def set_(op, device, has_kernel):
        _C.override_autocast_kernel_for_testing(op, device, has_kernel)
        done.append((op, device))

    yield set_
    for op, device in done:
        _C.override_autocast_kernel_for_testing(op, device, None)


def _cast_devices(graph, op: str) -> set:
    """The device sets of the smart casts feeding `op`'s inputs."""
    node = next(n for n in graph.nodes() if n.kind() == op)
    return {
        i.node().inputsAt(1).toIValue()
        for i in node.inputs()
        if i.node().kind().startswith("jitamp::autocast_") and i.node().kind() != BARRIER
    }


BARRIER = "jitamp::autocast_dependent"


def _behind_barrier(graph, op: str) -> bool:
    """Whether a fold barrier (fold_barriers.h) feeds `op`."""
    node = next(n for n in graph.nodes() if n.kind() == op)
    return any(i.node().kind() == BARRIER for i in node.inputs())


def _mm_in_scope(x, y):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return torch.mm(x, y) + torch.relu(x)


def test_a_row_torch_does_not_autocast_is_dropped_and_results_stay_eagers(pretend):
    # As if the installed torch had no AutocastCPU kernel for mm: jitamp must
    # not cast it in the IR; inside the scope eager's dispatcher decides.
    pretend("aten::mm", "cpu", False)
    row = next(r for r in policy_table() if r.op == "aten::mm")
    assert row.effective("cpu") == "none" and row.policy("cpu") == "lower_precision_fp"
    scripted = script(_mm_in_scope)
    assert _cast_devices(scripted.graph, "aten::mm") == {"cuda"}
    x, y = torch.randn(8, 8), torch.randn(8, 8)
    check_against_eager(_mm_in_scope, [x, y], scripted=scripted)
    check_against_eager(_mm_in_scope, [x, y], scripted=scripted, outer=cpu_autocast(torch.float16))


def test_an_op_torch_autocasts_that_the_table_lacks_is_reported_and_left_to_the_dispatcher(pretend):
    pretend("aten::relu", "cpu", True)
    assert "aten::relu" in ops_missing_from_table("cpu")
    scripted = script(_mm_in_scope)
    assert _cast_devices(scripted.graph, "aten::relu") == set()
    assert _cast_devices(scripted.graph, "aten::mm") == {"cpu,cuda"}
    # ... and kept from constant folding (its input may become a constant),
    # which a spelled policy does not need
    assert _behind_barrier(scripted.graph, "aten::relu")
    assert not _behind_barrier(scripted.graph, "aten::mm")
    check_against_eager(_mm_in_scope, [torch.randn(8, 8), torch.randn(8, 8)], scripted=scripted)


def test_missing_ops_are_logged(pretend, capfd):
    pretend("aten::relu", "cpu", True)
    torch._C._jit_set_logging_option(">>policy_table")
    try:
        script(_mm_in_scope)
    finally:
        torch._C._jit_set_logging_option("")
    err = capfd.readouterr().err
    assert "aten::relu on cpu" in err and "no row for it" in err, err
