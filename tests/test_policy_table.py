"""The policy table against the installed torch.

The installed torch's dispatcher decides which rows apply (a row for an op
torch does not autocast would change results); the generator
(tools/gen_policy_table.py, tests/test_policy_generator.py) decides each
row's policy. These tests fail when the effective table and the dispatcher
disagree, and show that jitamp still equals eager when the table and the
dispatcher differ (simulated).
"""
import itertools
import os
import re

import pytest
import torch

import jitamp
from jitamp import _C
from jitamp.passes import dispatcher_autocast_ops, ops_missing_from_table, policy_table
from oracle import check_against_eager, cpu_autocast, script, torchscript_deprecation_ignored

GENERATED = os.path.join(
    os.path.dirname(__file__), "..", "csrc", "jit_autocast", "ir", "policy_table_generated.inc"
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
        _C.testing.override_autocast_kernel(op, device, has_kernel)
        done.append((op, device))

    yield set_
    for op, device in done:
        _C.testing.override_autocast_kernel(op, device, None)


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


# --- a model rewritten on one torch, loaded on another -----------------------
#
# A saved model carries the casts of the torch that rewrote it; loading it
# rewrites it again (jitamp::prepare_loaded), and the casts must then be
# those of the torch that loads it: torch versions differ (aten::rms_norm is
# fp32 on CUDA from 2.12 on, aten::_addmm_activation lower_precision_fp on
# CPU from 2.6 on). Simulated here with `pretend`; scripts/cross_version.py
# runs it between real torch versions.


_SMART_CASTS = ("jitamp::autocast_to_fp16", "jitamp::autocast_to_fp32", "jitamp::autocast_promote")


def _casts_by_op(graph) -> dict:
    """{op: per input, the (cast, devices) between it and its source}."""
    out = {}
    for node in graph.nodes():
        if node.kind() in _SMART_CASTS or not node.kind().startswith("aten::"):
            continue
        chains = []
        for value in node.inputs():
            chain = []
            while value.node().kind() in _SMART_CASTS:
                cast = value.node()
                devices = next(i.toIValue() for i in cast.inputs() if i.type().kind() == "StringType")
                chain.append((cast.kind(), devices))
                value = cast.inputsAt(value.offset())
            chains.append(sorted(chain))
        if any(chains):
            out.setdefault(node.kind(), []).append(chains)
    return out


def _cast_chain_devices(graph, op: str) -> list:
    """Device sets of every smart cast between `op`'s inputs and their
    sources (casts can stack: a CPU one behind a CUDA one)."""
    return sorted(devices for chains in _casts_by_op(graph)[op] for chain in chains
                  for _, devices in chain)


class _MmInScope(torch.nn.Module):
    def forward(self, x, y):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return torch.mm(x, y) + torch.relu(x)


def _saved(tmp_path, cls=_MmInScope) -> tuple:
    """Scripted with jitamp and saved: the path, and the forward graph's
    casts as saved (`_casts_by_op`)."""
    path = str(tmp_path / f"{cls.__name__}.pt")
    with torchscript_deprecation_ignored():
        scripted = script(cls())
        torch.jit.save(scripted, path)
    return path, _casts_by_op(scripted.forward.graph)


def _load(path: str):
    with torchscript_deprecation_ignored():
        return torch.jit.load(path)


def test_a_cast_the_loading_torch_does_not_make_is_dropped(pretend, tmp_path):
    path, _ = _saved(tmp_path)
    assert _cast_chain_devices(_load(path).forward.graph, "aten::mm") == ["cpu,cuda"] * 2
    # Loaded by a torch without mm's CPU autocast kernel: its casts are
    # CUDA's alone, not CUDA's on top of the saving torch's.
    pretend("aten::mm", "cpu", False)
    assert _cast_chain_devices(_load(path).forward.graph, "aten::mm") == ["cuda"] * 2


def test_a_cast_the_saving_torch_did_not_make_is_added(pretend, tmp_path):
    pretend("aten::mm", "cpu", False)
    path, _ = _saved(tmp_path)
    _C.testing.override_autocast_kernel("aten::mm", "cpu", None)
    loaded = _load(path)
    assert _cast_chain_devices(loaded.forward.graph, "aten::mm") == ["cpu,cuda"] * 2
    x, y = torch.randn(8, 8), torch.randn(8, 8)
    check_against_eager(_MmInScope(), [x, y], scripted=loaded)
    check_against_eager(_MmInScope(), [x, y], scripted=loaded, outer=cpu_autocast(torch.float16))


def test_casts_of_ops_without_a_row_are_kept(tmp_path):
    # Not the pass's to judge (freezing may hand a cast to another op): a
    # cast feeding aten::add stays through a load.
    graph = torch._C.parse_ir(
        """
        graph(%x : Tensor, %y : Tensor):
          %devices : str = prim::Constant[value="cpu,cuda"]()
          %one : int = prim::Constant[value=1]()
          %region : int = jitamp::autocast_caller_region()
          %xc : Tensor = jitamp::autocast_to_fp16(%x, %devices, %region)
          %z : Tensor = aten::add(%xc, %y, %one)
          return (%z)
        """
    )
    jitamp.rewrite_graph(graph)
    assert len(graph.findAllNodes("jitamp::autocast_to_fp16")) == 1, graph


def test_the_table_says_which_ops_torch_versions_autocast_differently():
    rows = {row.op: row for row in policy_table()}
    assert "autocast on cuda in torch 2.12.0" in rows["aten::rms_norm"].varies
    assert "not in 2.4.1 to 2.11.0" in rows["aten::rms_norm"].varies
    assert "autocast on cpu in torch 2.6.0" in rows["aten::_addmm_activation"].varies
    assert rows["aten::mm"].varies == ""
    # an implied row follows the op it reaches
    assert rows["aten::nll_loss_nd"].varies == rows["aten::nll_loss"].varies == ""


class _EveryPolicy(torch.nn.Module):
    """One op of each policy kind the pass spells, per device."""

    def forward(self, x, y):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            a = torch.mm(x, y)  # lower_precision_fp, both devices
            b = torch.prod(x, 1, keepdim=True) * y  # cpu fp32, cuda fp32_set_opt_dtype
            c = torch.cat([x, y.to(torch.bfloat16)])  # cpu promote (a list)
            d = x.index_copy(0, torch.tensor([1, 0]), y[:2])  # cpu promote
            e = torch.binary_cross_entropy_with_logits(x, y.sigmoid(), None, None, 0)  # fp32, both
            f = torch.cumsum(x, 0) + torch.softmax(x, 0)  # cuda fp32_set_opt_dtype
            g = torch.layer_norm(x, [8])  # cuda fp32
            return a + b + c[:8].float() + d + e + f + g


_fresh = itertools.count()
_PRETENDED = [("aten::mm", "cpu"), ("aten::prod.dim_int", "cpu"), ("aten::cat", "cpu"),
              ("aten::index_copy", "cpu"), ("aten::binary_cross_entropy_with_logits", "cpu"),
              ("aten::cumsum", "cuda"), ("aten::softmax.int", "cuda"), ("aten::layer_norm", "cuda")]


@pytest.mark.parametrize("op,device", _PRETENDED)
def test_loading_gives_every_policy_kind_the_loading_torchs_casts(pretend, tmp_path, op, device):
    def saved() -> tuple:
        # a class of its own: TorchScript compiles (and jitamp rewrites) a
        # module class once per process
        return _saved(tmp_path, type(f"EveryPolicy{next(_fresh)}", (_EveryPolicy,), {}))

    path, as_saved = saved()
    pretend(op, device, False)
    # saved by this torch, loaded by one without the op's kernel on `device`
    path_without, fresh_without = saved()
    assert fresh_without != as_saved
    assert _casts_by_op(_load(path).forward.graph) == fresh_without
    # saved by a torch without it, loaded by this one
    _C.testing.override_autocast_kernel(op, device, None)
    loaded = _load(path_without)
    assert _casts_by_op(loaded.forward.graph) == as_saved
    x, y = torch.randn(8, 8), torch.randn(8, 8)
    check_against_eager(_EveryPolicy(), [x, y], scripted=loaded)
