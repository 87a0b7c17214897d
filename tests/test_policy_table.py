"""The policy table against the installed torch's dispatcher.

Fails when a torch upgrade adds, removes or renames an op in eager
autocast's lists, so the table cannot silently go stale.
"""
from collections import Counter

import pytest

from jitamp.passes import dispatcher_autocast_ops, policy_table


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_table_matches_dispatcher(device):
    table = {
        row.op
        for row in policy_table()
        if row.policy(device) != "none" and not row.implied(device)
    }
    # The dispatcher names default overloads without a suffix, as we do.
    dispatcher = dispatcher_autocast_ops(device)
    assert table - dispatcher == set(), f"in the table, not in torch: {sorted(table - dispatcher)}"
    assert dispatcher - table == set(), f"in torch, not in the table: {sorted(dispatcher - table)}"


def test_policy_counts_of_torch_2_13():
    """The counts eager's autocast_mode.cpp gives on 2.13 (DESIGN.md)."""
    own = [row for row in policy_table()]
    cpu = Counter(r.cpu for r in own if r.cpu != "none" and not r.cpu_implied)
    cuda = Counter(r.cuda for r in own if r.cuda != "none" and not r.cuda_implied)
    assert cpu == {"lower_precision_fp": 24, "fp32": 100, "promote": 3}
    assert cuda == {
        "lower_precision_fp": 35,
        "fp32": 59,
        "fp32_set_opt_dtype": 11,
        "fp32_append_dtype": 2,
        "promote": 11,
        "banned": 1,
    }


def test_implied_entries_are_ops_torchscript_calls():
    import torch

    implied = [r for r in policy_table() if r.cpu_implied or r.cuda_implied]
    assert implied, "expected entries for ops TorchScript reaches by another name"
    for row in implied:
        name, _, overload = row.op.partition(".")
        packet = getattr(torch.ops.aten, name.split("::")[1])
        assert (overload or "default") in packet.overloads(), row.op


def test_lookup_keys_are_unique():
    ops = [r.op for r in policy_table()]
    assert len(ops) == len(set(ops))
