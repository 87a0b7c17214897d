"""Autocast scopes in code traced with `torch.jit.trace` while jitamp is
enabled (jitamp/_tracing.py): the traced code keeps its scopes, and runs as
eager does under every outer autocast state, on calls 1, 2, 3 and 10.

The eager side of each comparison is the Python the trace was taken from
(with plain Python callees where the traced side calls scripted ones).
"""
import io
import warnings

import pytest
import torch
from torch import Tensor

import jitamp
import oracle
from oracle import check_against_eager, cpu_autocast

pytestmark = [
    pytest.mark.filterwarnings("ignore:`torch\\.jit\\.\\w+` is deprecated"),
]

OUTERS = {
    "no_outer": None,
    "outer_bf16": cpu_autocast(torch.bfloat16),
    "outer_fp16": cpu_autocast(torch.float16),
    "outer_disabled": cpu_autocast(torch.bfloat16, enabled=False),
}

torch.manual_seed(0)
X = torch.randn(8, 8)
W = torch.randn(8, 8)


def trace(fn, args):
    """torch.jit.trace with jitamp enabled; the trace checker's warnings
    are errors (a recorded scope must not make traces differ)."""
    with oracle.torchscript_deprecation_ignored(), warnings.catch_warnings():
        warnings.simplefilter("error", torch.jit.TracerWarning)
        with jitamp.enable():
            return torch.jit.trace(fn, args)


def disabling_helper(x: Tensor, w: Tensor):
    with torch.autocast("cpu", enabled=False):
        return torch.mm(x, w)


TRACED_DISABLING_HELPER = None


def _traced_disabling_helper():
    global TRACED_DISABLING_HELPER
    if TRACED_DISABLING_HELPER is None:
        TRACED_DISABLING_HELPER = trace(disabling_helper, (X, W))
    return TRACED_DISABLING_HELPER


def calls_disabling_helper_eager(x: Tensor, w: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return disabling_helper(x, w), torch.mm(x, w)


@pytest.mark.parametrize("outer", list(OUTERS))
def test_traced_disabling_scope_called_inside_a_scripted_scope(outer):
    traced = _traced_disabling_helper()

    def calls_disabling_helper(x: Tensor, w: Tensor):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return traced(x, w), torch.mm(x, w)

    scripted = oracle.script(calls_disabling_helper)
    check_against_eager(calls_disabling_helper_eager, [X, W], scripted=scripted, outer=OUTERS[outer],
                        grad=outer in ("no_outer", "outer_disabled"))


def mm_plain(x: Tensor, w: Tensor):
    return torch.mm(x, w)


def scope_around_a_call_eager(x: Tensor, w: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = mm_plain(x, w)
    return y, torch.mm(x, w)


@pytest.mark.parametrize("outer", list(OUTERS))
def test_traced_scope_around_a_scripted_call(outer):
    scripted_mm = oracle.script(mm_plain)

    def scope_around_a_call(x: Tensor, w: Tensor):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = scripted_mm(x, w)
        return y, torch.mm(x, w)

    traced = trace(scope_around_a_call, (X, W))
    assert traced.graph.findNode("prim::CallFunction") is not None, "the trace should call the scripted function"
    check_against_eager(scope_around_a_call_eager, [X, W], scripted=traced, outer=OUTERS[outer],
                        grad=outer in ("no_outer", "outer_disabled"))


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)
        self.norm = torch.nn.LayerNorm(8)

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", enabled=False):
            y = self.norm(x.float())
        return self.proj(y)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.head = torch.nn.Linear(8, 4)
        self.skip = torch.nn.Linear(8, 4)

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = self.block(x)
            z = torch.softmax(self.head(y), dim=-1)
        # Not self.head: under an outer float16 region eager's cast cache
        # would hand back its bfloat16 weight (the stale-cache quirk,
        # docs/runtime-model.md, "The cast cache").
        return z + self.skip(y.float())


@pytest.fixture(scope="module")
def net_and_traced():
    torch.manual_seed(1)
    net = Net()
    return net, trace(net, (X,))


@pytest.mark.parametrize("outer", list(OUTERS))
def test_traced_module_with_nested_scopes(net_and_traced, outer):
    net, traced = net_and_traced
    check_against_eager(net, [X], scripted=traced, outer=OUTERS[outer],
                        grad=outer in ("no_outer", "outer_disabled"))


def test_traced_module_saved_and_loaded(net_and_traced, tmp_path):
    net, traced = net_and_traced
    buffer = io.BytesIO()
    with oracle.torchscript_deprecation_ignored():
        torch.jit.save(traced, buffer)
        buffer.seek(0)
        loaded = torch.jit.load(buffer)
    check_against_eager(net, [X], scripted=loaded, outer=OUTERS["outer_fp16"])
    check_against_eager(net, [X], scripted=loaded, grad=True)


def test_traced_graph_holds_the_scopes(net_and_traced):
    _, traced = net_and_traced
    enters = traced.graph.findAllNodes("jitamp::autocast_enter")
    assert len(enters) == 1 and len(traced.graph.findAllNodes("jitamp::autocast_exit")) == 1
    # device type, dtype (15: ScalarType BFloat16), enabled, cache_enabled
    assert [i.toIValue() for i in enters[0].inputs()] == ["cpu", 15, True, True]
    block_enters = traced.block.graph.findAllNodes("jitamp::autocast_enter")
    assert [i.toIValue() for i in block_enters[0].inputs()][2] is False


def test_tracing_without_jitamp_records_no_scope():
    with oracle.torchscript_deprecation_ignored():
        jitamp.disable()
        traced = torch.jit.trace(disabling_helper, (X, W))
    assert traced.graph.findNode("jitamp::autocast_enter") is None
    assert not hasattr(torch.amp.autocast_mode.autocast.__enter__, "__wrapped__")


def test_other_tracer_users_record_no_scope():
    """Only torch.jit.trace / trace_module record scopes: the tracer's other
    users (the TorchScript-based ONNX exporter, TensorBoard) go through
    torch.jit._get_trace_graph and get the trace they always got."""
    with oracle.torchscript_deprecation_ignored(), jitamp.enable():
        graph, _ = torch.jit._get_trace_graph(disabling_helper, (X, W))
        traced = torch.jit.trace(disabling_helper, (X, W))
    assert graph.findNode("jitamp::autocast_enter") is None
    assert traced.graph.findNode("jitamp::autocast_enter") is not None


def test_eager_autocast_is_unchanged_while_enabled():
    """The patched __enter__/__exit__ record nothing outside tracing."""
    scope = torch.autocast("cpu", dtype=torch.bfloat16)  # (`as` binds None before torch 2.5)
    before = oracle.autocast_state()
    assert before[0] == (False, torch.bfloat16) and before[-2:] == (True, 0)  # a fresh thread's
    with jitamp.enable():
        with scope:
            assert torch.mm(X, W).dtype == torch.bfloat16
        assert "_jitamp_traced_scopes" not in scope.__dict__
    assert oracle.autocast_state() == before
