"""Frozen inference: casts of frozen weights under a static autocast state
are done once, when the module is frozen (csrc/jit_autocast/passes/fold_static_casts.h),
and the frozen model still computes what eager autocast computes on the
original module, for callers in any autocast state (docs/frozen.md, "The casts
of frozen weights")."""
import contextlib
import importlib.util
import os
import re
import subprocess
import sys
import textwrap
from typing import List, Tuple

import pytest
import torch
import torch.nn.functional as F
from torch import Tensor, nn

import jitamp
import oracle
from oracle import check_against_eager, cpu_autocast, torchscript_deprecation_ignored

SMART_CASTS = ("jitamp::autocast_to_fp16", "jitamp::autocast_to_fp32", "jitamp::autocast_promote")

# Eager autocast states of the caller: none, bf16, fp16, disabled.
OUTERS = {
    "no_outer": None,
    "outer_bf16": cpu_autocast(torch.bfloat16),
    "outer_fp16": cpu_autocast(torch.float16),
    "outer_disabled": cpu_autocast(enabled=False),
}
GRAD = {
    "no_grad": torch.no_grad,
    "grad": contextlib.nullcontext,
}


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 64), nn.ReLU(),
            nn.LayerNorm(64), nn.Linear(64, 8))

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return self.net(x)


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, bias=False)
        self.head = nn.Linear(8, 5)

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = torch.relu(self.bn(self.conv1(x)))
            y = self.conv2(y).mean(dim=(2, 3))
            return self.head(y)


class Dynamic(nn.Module):
    """Static and dynamic parts side by side. (Each value is converted once:
    torch.jit.freeze merges two equal `y.float()`, and with grad on their
    gradients then add up in float32, not twice in bfloat16 as in eager --
    freezing's common subexpressions, not autocast.)"""

    def __init__(self):
        super().__init__()
        self.outside = nn.Linear(8, 8)  # no scope: the caller's state
        self.flagged = nn.Linear(8, 8)  # enabled=flag
        self.thread_dtype = nn.Linear(8, 8)  # no dtype: the thread's dtype
        self.static = nn.Linear(8, 8)  # bf16 scope: folded
        self.off = nn.Linear(8, 8)  # enabled=False inside it: casts removed

    def forward(self, x: Tensor, flag: bool) -> Tensor:
        y = self.outside(x)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=flag):
            y = self.flagged(y)
        with torch.autocast("cpu"):
            y = self.thread_dtype(y)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = self.static(y).float()
            with torch.autocast("cpu", enabled=False):
                z = self.off(y)
        return y + z


class NestedDisabled(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = self.a(x)
            with torch.autocast("cpu", enabled=False):
                z = self.b(y.float())
            return y + self.a(z)


class Conv1D(nn.Module):
    """GPT-2's Conv1D: addmm with beta = alpha = 1, which TorchScript's stock
    profiling executor splits into mm + add (rounding twice) unless jitamp
    keeps it whole; in a bfloat16 scope, outside it, and with a float beta."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(64, 64))
        self.bias = nn.Parameter(torch.randn(64))

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        z = torch.addmm(self.bias, x, self.weight, beta=1.0)
        return y.float() + z


class SummedMMs(nn.Module):
    """torch.mm as TorchScript's stock executors batch it (BatchMM, on no-grad
    code): a tree of four summed by add becomes one mm of concatenated
    inputs, rounding once where eager rounds each product and sum, and eight
    of one input become one mm of the others concatenated; in a bfloat16
    scope and outside it. (No two products are equal: freezing's CSE would
    merge them, which changes gradients; docs/frozen.md, "What the frozen
    model promises".)"""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(12, 64, 64))

    def forward(self, x: Tensor) -> Tensor:
        w = self.w
        with torch.autocast("cpu", dtype=torch.bfloat16):
            low = (torch.mm(x, w[8]) + torch.mm(x.t(), w[9])
                   + torch.mm(x * 2, w[10]) + torch.mm(x + 1, w[11]))
            s0, s1, s2, s3 = torch.mm(x, w[0]), torch.mm(x, w[1]), torch.mm(x, w[2]), torch.mm(x, w[3])
            s4, s5, s6, s7 = torch.mm(x, w[4]), torch.mm(x, w[5]), torch.mm(x, w[6]), torch.mm(x, w[7])
        side = torch.stack([s0, s1, s2, s3, s4, s5, s6, s7])
        full = (torch.mm(x, w[4]) + torch.mm(x * 3, w[5])
                + torch.mm(x - 1, w[6]) + torch.mm(x / 2, w[7]))
        return low.float() + side.float().sum(0) + full


def frozen_and_eager(cls, how="freeze"):
    torch.manual_seed(0)
    model = cls().eval()
    scripted = oracle.script(model)
    with torchscript_deprecation_ignored():
        if how == "freeze":
            frozen = torch.jit.freeze(scripted)
        elif how == "jitamp.freeze":
            frozen = jitamp.freeze(scripted)
        else:
            frozen = torch.jit.optimize_for_inference(scripted)
    return model, frozen


def casts_of_constants(graph) -> list:
    """Smart casts whose input is a constant tensor (a frozen weight)."""
    return [n for n in graph.findAllNodes("prim::Constant")
            if n.output().type().kind() == "TensorType"
            for use in n.output().uses() if use.user.kind() in SMART_CASTS]


def constant_names(graph, kind: str) -> list:
    """Debug names of the constants a cast of kind `kind` takes."""
    return sorted(n.inputsAt(0).debugName() for n in graph.findAllNodes(kind)
                  if n.inputsAt(0).node().kind() == "prim::Constant")


def inputs(cls) -> tuple:
    torch.manual_seed(1)
    if cls is ConvNet:
        return (torch.randn(2, 3, 8, 8),)
    if cls is Dynamic:
        return (torch.randn(4, 8), True)
    if cls in (Conv1D, SummedMMs):
        return (torch.randn(64, 64),)
    return (torch.randn(4, 16 if cls is MLP else 8),)


@pytest.mark.parametrize("how", ["freeze", "jitamp.freeze", "optimize_for_inference"])
@pytest.mark.parametrize("cls", [MLP, ConvNet], ids=["mlp", "convnet"])
def test_static_scope_weights_become_constants(cls, how):
    model, frozen = frozen_and_eager(cls, how)
    graph = frozen.graph
    assert casts_of_constants(graph) == [], graph
    # The weights in the graph are bfloat16 (and, for LayerNorm's float32
    # policy, float32 without a cast): cast once, at freezing.
    dtypes = {n.output().toIValue().dtype for n in graph.findAllNodes("prim::Constant")
              if n.output().type().kind() == "TensorType"}
    assert torch.bfloat16 in dtypes, graph
    # What stays is the cast of the input (its dtype is the caller's).
    assert len(graph.findAllNodes("jitamp::autocast_to_fp16")) >= 1
    for outer in OUTERS.values():
        for grad in GRAD.values():
            with grad():
                check_against_eager(model, inputs(cls), scripted=frozen, outer=outer)


@pytest.mark.parametrize("outer", list(OUTERS))
@pytest.mark.parametrize("grad", list(GRAD))
def test_dynamic_parts_keep_their_casts(outer, grad):
    model, frozen = frozen_and_eager(Dynamic)
    graph = frozen.graph
    # Outside a scope, enabled=flag, no dtype: three layers' weights and
    # biases keep their casts; the bf16 scope's are constants, the
    # enabled=False scope's are gone.
    kept = constant_names(graph, "jitamp::autocast_to_fp16")
    assert len(kept) == 6, graph
    assert not any("static" in name or "off" in name for name in kept), kept
    with GRAD[grad]():
        for flag in (True, False):
            check_against_eager(model, (torch.randn(4, 8), flag), scripted=frozen,
                                outer=OUTERS[outer], grad=grad == "grad")


@pytest.mark.parametrize("outer", list(OUTERS))
def test_enabled_false_inside_bf16_scope(outer):
    model, frozen = frozen_and_eager(NestedDisabled)
    graph = frozen.graph
    assert casts_of_constants(graph) == [], graph
    # self.b runs in float32: its weights stay float32 constants, uncast.
    for name in ("self.b.weight", "self.b.bias"):
        matches = [n for n in graph.findAllNodes("prim::Constant") if n.output().debugName() == name]
        assert len(matches) == 1 and matches[0].output().toIValue().dtype == torch.float32, graph
    check_against_eager(model, inputs(NestedDisabled), scripted=frozen, outer=OUTERS[outer], grad=True)
    with torch.no_grad():
        check_against_eager(model, inputs(NestedDisabled), scripted=frozen, outer=OUTERS[outer])


class RNNCells(nn.Module):
    """The RNN cells, stepped in a static bf16 scope. On CPU eager autocast
    has no policy for them: it casts their weights in the aten::linear they
    call inside, and a frozen weight (a constant, which eager's cache does
    not keep) would be cast there at every step."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRUCell(8, 8)
        self.lstm = nn.LSTMCell(8, 8)
        self.tanh = nn.RNNCell(8, 8)
        self.relu = nn.RNNCell(8, 8, nonlinearity="relu", bias=False)

    def forward(self, xs: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            h = torch.zeros(xs.size(1), 8)
            c = torch.zeros(xs.size(1), 8)
            for t in range(xs.size(0)):
                h = self.gru(xs[t], h)
                h, c = self.lstm(h, (h, c))
                h = self.relu(self.tanh(h, h), h)
            return h + c


def _cast_copies_per_call(fn, *args) -> int:
    with torch.no_grad():
        fn(*args)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            fn(*args)
    return sum(e.name == "aten::_to_copy" for e in prof.events())


@pytest.mark.parametrize("outer", list(OUTERS))
@pytest.mark.parametrize("grad", list(GRAD))
def test_rnn_cell_weights_cast_once(outer, grad):
    model, frozen = frozen_and_eager(RNNCells)
    graph = frozen.graph
    cells = [n for kind in ("gru_cell", "lstm_cell", "rnn_tanh_cell", "rnn_relu_cell")
             for n in graph.findAllNodes("aten::" + kind)]
    weights = [n.inputsAt(i) for n in cells for i in range(2, 6) if n.inputsAt(i).type().kind() == "TensorType"]
    assert len(weights) == 14, graph  # the relu cell has no biases
    for weight in weights:
        assert weight.node().kind() == "prim::Constant", graph
        assert weight.toIValue().dtype == torch.bfloat16, graph
    # No float32 copy of a weight stays behind.
    assert not [n for n in graph.findAllNodes("prim::Constant")
                if n.output().type().kind() == "TensorType" and n.output().toIValue().dtype == torch.float32], graph
    xs = torch.randn(3, 2, 8)
    with GRAD[grad]():
        check_against_eager(model, (xs,), scripted=frozen, outer=OUTERS[outer], grad=grad == "grad")


def test_rnn_cell_weights_not_cast_per_call():
    model, frozen = frozen_and_eager(RNNCells)
    xs = torch.randn(3, 2, 8)

    def eager(xs):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return model(xs)

    # Eager casts each of the 14 weights once per call (its cache keeps
    # them for the region); the frozen model casts the same activations and
    # no weight.
    assert _cast_copies_per_call(frozen, xs) == _cast_copies_per_call(eager, xs) - 14


def test_one_constant_per_weight_and_state():
    # self.a is used twice in the same bf16 scope: one bf16 copy.
    _, frozen = frozen_and_eager(NestedDisabled)
    bf16 = [n for n in frozen.graph.findAllNodes("prim::Constant")
            if n.output().type().kind() == "TensorType" and n.output().toIValue().dtype == torch.bfloat16]
    assert len(bf16) == 2, frozen.graph  # a.weight, a.bias


def test_folding_is_idempotent_and_rewrite_adds_nothing():
    _, frozen = frozen_and_eager(MLP)
    graph = frozen.graph
    before = str(graph)
    assert not jitamp.passes.run("fold_static_casts", graph)
    assert not jitamp.rewrite_graph(graph)  # the pipeline casts no folded weight again
    assert str(graph) == before


def test_weights_cast_once_not_per_call():
    model, frozen = frozen_and_eager(MLP)
    x = inputs(MLP)[0]
    with torch.no_grad():
        frozen(x)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            frozen(x)
    copies = [e for e in prof.events() if e.name in ("aten::_to_copy", "aten::copy_")]
    # the input's cast to bfloat16 only (one _to_copy with its copy_)
    assert sum(e.name == "aten::_to_copy" for e in copies) == 1, [e.name for e in copies]


def rewritten_unfolded(model, simple_executor=True):
    """torch.jit.freeze's copy of `model` scripted with jitamp, rewritten as
    the freeze pipeline's first step does, its casts not folded yet."""
    with torchscript_deprecation_ignored():
        frozen = jitamp._loader.plain_freeze(oracle.script(model, profiling_executor=not simple_executor))
    jitamp.passes.run_on_module(["rewrite_module"], frozen, simple_executor=simple_executor)
    return frozen


def test_a_frozen_module_that_has_run_is_folded_or_refused():
    torch.manual_seed(0)
    model = MLP().eval()
    # Run by jitamp's simple executor, which jitamp builds (function_rewrite.cpp):
    # folding after a call remakes it, so the fold takes effect.
    frozen = rewritten_unfolded(model)
    frozen(inputs(MLP)[0])
    assert casts_of_constants(frozen.graph) != []
    folded_names = jitamp._C.freeze_module(frozen._c, simple_executor=True)
    assert [name.rsplit(".", 2)[-2:] for name in folded_names] == [["MLP", "forward"]]
    assert casts_of_constants(frozen.graph) == []
    with torch.no_grad(), torch.autograd.profiler.profile(use_kineto=False) as prof:
        frozen(inputs(MLP)[0])
    assert sum(e.name == "aten::_to_copy" for e in prof.function_events) == 1  # the input
    check_against_eager(model, inputs(MLP), scripted=frozen)
    # Run by the profiling executor, which TorchScript builds and which keeps
    # the graph it compiled: folding now would not count.
    profiled = rewritten_unfolded(model, simple_executor=False)
    profiled(inputs(MLP)[0])
    with pytest.raises(RuntimeError, match="cannot fold the casts of .*already run"):
        jitamp._C.freeze_module(profiled._c, simple_executor=False)
    # a folded one that has run: nothing to do, no error
    with torchscript_deprecation_ignored():
        folded = torch.jit.freeze(oracle.script(model))
    folded(inputs(MLP)[0])
    assert jitamp._C.freeze_module(folded._c, simple_executor=True) == []


class TwoMethods(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 8)
        self.out = nn.Linear(8, 4)

    @torch.jit.export
    def encode(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return torch.relu(self.fc(x))

    def forward(self, x: Tensor) -> Tensor:
        return self.out(self.encode(x).float())


def test_optimize_for_inference_folds_the_other_methods_too():
    """Of a scripted module, and of one frozen first, whose fold is done:
    torch's passes would now repack or transpose its cast weights, so it is
    left as optimizing the unfrozen module leaves it."""
    torch.manual_seed(0)
    model = TwoMethods().eval()
    with torchscript_deprecation_ignored():
        optimized = torch.jit.optimize_for_inference(oracle.script(model), other_methods=["encode"])
        frozen_first = torch.jit.optimize_for_inference(
            torch.jit.freeze(oracle.script(model), preserved_attrs=["encode"]), other_methods=["encode"])
    for method in ("forward", "encode"):
        kinds = [[node.kind() for node in getattr(m, method).graph.nodes()] for m in (optimized, frozen_first)]
        assert kinds[0] == kinds[1], kinds
    # The bfloat16 scope's weight cast once, in both methods; the head's
    # casts, whose state is the caller's, stay.
    for graph, kept in ((optimized.graph, ["self.out.bias", "self.out.weight"]), (optimized.encode.graph, [])):
        assert constant_names(graph, "jitamp::autocast_to_fp16") == kept, graph
        assert "%self.fc.weight_BFloat16 : BFloat16(8, 16" in str(graph), graph
    x = inputs(MLP)[0]
    for outer in OUTERS.values():
        for grad in GRAD.values():
            with grad():
                for scripted in (optimized, frozen_first):
                    check_against_eager(model, (x,), scripted=scripted, outer=outer)
                    check_against_eager(model.encode, (x,), scripted=scripted.encode, outer=outer)


def test_optimize_for_inference_refuses_what_torch_refuses():
    with pytest.raises(RuntimeError) as ours:
        torch.jit.optimize_for_inference(MLP().eval())
    with pytest.raises(RuntimeError) as torchs:
        torch.jit.optimize_for_inference.__wrapped__(MLP().eval())  # torch's own
    assert str(ours.value) == str(torchs.value)


def test_jitamp_freeze_refuses_bad_input():
    with pytest.raises(TypeError, match="scripted or loaded module"):
        jitamp.freeze(MLP().eval())
    with pytest.raises(ValueError, match=r"\.eval\(\)"):
        jitamp.freeze(oracle.script(MLP()))


def test_jitamp_freeze_of_a_module_scripted_without_jitamp():
    torch.manual_seed(0)
    model = MLP().eval()
    frozen = jitamp.freeze(oracle.script_without_jitamp(model))
    assert casts_of_constants(frozen.graph) == []
    check_against_eager(model, inputs(MLP), scripted=frozen, outer=cpu_autocast(torch.float16))


SAVED_PROGRAM = """
import warnings
warnings.filterwarnings("ignore")
import torch
import jitamp
from oracle import assert_same, cpu_autocast
loaded = torch.jit.load({path!r})
# loading rewrites (idempotently): no cast of a folded weight comes back
casts = [n for n in loaded.graph.findAllNodes("prim::Constant")
         if n.output().type().kind() == "TensorType"
         for u in n.output().uses() if u.user.kind().startswith("jitamp::autocast_")]
assert casts == [], loaded.graph
x, expected, expected_fp16 = torch.load({data!r}, weights_only=True)
with torch.no_grad():
    for _ in range(3):
        assert_same(expected, loaded(x))
        with cpu_autocast(torch.float16)():
            assert_same(expected_fp16, loaded(x))
print("done")
"""


def test_saved_frozen_model_loads_folded(tmp_path):
    model, frozen = frozen_and_eager(ConvNet)
    x = inputs(ConvNet)[0]
    with torch.no_grad():
        expected = model(x)
        with cpu_autocast(torch.float16)():
            expected_fp16 = model(x)
    with torchscript_deprecation_ignored():
        torch.jit.save(frozen, str(tmp_path / "frozen.pt"))
    torch.save((x, expected, expected_fp16), str(tmp_path / "data.pt"))
    done = oracle.run_program(tmp_path, textwrap.dedent(SAVED_PROGRAM).format(
        path=str(tmp_path / "frozen.pt"), data=str(tmp_path / "data.pt")))
    assert done.returncode == 0 and done.stdout.strip().endswith("done"), done.stderr[-3000:]


class ViewOfAWeight(nn.Module):
    """Freezing computes `v`, a view of w's values laid out otherwise
    (strides (6, 1), offset 1), beside the constant w that a linear reads
    at each call (the caller's autocast decides it). Loading compiles the
    methods again, and its constant pooling merged the two (equal values,
    no complete types at load): the linear then read the view, 1 ulp off
    eager's float32 result on every loader (fuzz seed 2602, index 2667)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(310516)  # values whose linear rounds the view otherwise
        self.lin = nn.Linear(4, 4)
        self.w = nn.Parameter(torch.randn(4, 4))

    def forward(self, x: Tensor) -> List[Tensor]:
        out: List[Tensor] = []
        out.append(F.pad(self.w.unsqueeze(0), [1, 1], mode="reflect").squeeze(0)[:, 1:5])
        out.append(self.lin(self.w))
        out.append(self.lin(x))
        return out


class EqualWeightsLaidOutApart(nn.Module):
    """Two parameters of equal values, the second a column slice of a wider
    tensor (torch.jit.freeze without jitamp merges them already)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(310516)
        w = torch.randn(4, 4)
        wide = torch.zeros(4, 6)
        wide[:, 1:5] = w
        self.a = nn.Parameter(w)
        self.b = nn.Parameter(wide[:, 1:5])
        self.bias = nn.Parameter(torch.randn(4))

    def forward(self, x: Tensor) -> List[Tensor]:
        return [F.linear(self.b, x, self.bias), F.linear(self.a, x, self.bias)]


# (standalone models promise eager's results to callers whose autocast is
# off only: docs/frozen.md, "Standalone")
@pytest.mark.parametrize("how,outer", [
    (how, outer) for how in ("freeze", "standalone") for outer in OUTERS
    if how == "freeze" or outer in ("no_outer", "outer_disabled")])
@pytest.mark.parametrize("cls", [ViewOfAWeight, EqualWeightsLaidOutApart], ids=["view", "parameters"])
def test_saved_frozen_model_keeps_constants_laid_out_as_eager(cls, how, outer, tmp_path):
    model = cls().eval()
    with torchscript_deprecation_ignored():
        scripted = oracle.script(cls().eval())
        frozen = torch.jit.freeze(scripted) if how == "freeze" else jitamp.freeze(scripted, standalone=True)
        torch.jit.save(frozen, str(tmp_path / "frozen.pt"))
        loaded = torch.jit.load(str(tmp_path / "frozen.pt"))
    # the view reaches the loaded graph as an attribute, apart from w
    assert any(n.kind() == "prim::GetAttr" and n.s("name").startswith("_pooled_apart_constant_")
               for n in _all_nodes(loaded.graph)), loaded.graph
    for candidate in (frozen, loaded):
        check_against_eager(model, [torch.randn(4, 4)], scripted=candidate,
                            outer=oracle.no_grad_under(OUTERS[outer]))


def test_constants_of_one_layout_stay_constants():
    """Only a constant pooling would merge with one laid out otherwise is
    read from an attribute; a second run changes nothing."""
    with torchscript_deprecation_ignored():
        frozen = torch.jit.freeze(oracle.script(MLP().eval()))
        assert_unchanged_by(["keep_constants_apart"], frozen)
        apart = torch.jit.freeze(oracle.script(ViewOfAWeight().eval()))
    reads = [n for n in _all_nodes(apart.graph)
             if n.kind() == "prim::GetAttr" and n.s("name").startswith("_pooled_apart_constant_")]
    assert len(reads) == 1, apart.graph
    assert_unchanged_by(["keep_constants_apart"], apart)


def assert_unchanged_by(steps, frozen):
    """Running the freeze pipelines' `steps` again leaves `frozen` as it is."""
    before = frozen.code
    jitamp.passes.run_on_module(steps, frozen)
    assert frozen.code == before


# ---------------------------------------------------------------------------
# standalone=True: no jitamp op left, for callers whose autocast is off.


def standalone(cls):
    torch.manual_seed(0)
    model = cls().eval()
    with torchscript_deprecation_ignored():
        frozen = jitamp.freeze(oracle.script(model), standalone=True)
    return model, frozen


def _all_nodes(graph):
    out = []

    def walk(block):
        for n in block.nodes():
            out.append(n)
            for b in n.blocks():
                walk(b)

    walk(graph)
    return out


@pytest.mark.parametrize("cls", [MLP, ConvNet, NestedDisabled, Conv1D, SummedMMs],
                         ids=["mlp", "convnet", "nested_disabled", "conv1d", "summed_mms"])
def test_standalone_has_no_jitamp_op_and_matches_eager(cls):
    model, frozen = standalone(cls)
    graph = frozen.graph
    assert [n.kind() for n in _all_nodes(graph) if n.kind().startswith("jitamp::")] == [], graph
    assert "jitamp" not in frozen.code
    assert not frozen._c.hasattr("_jitamp_loader")
    assert casts_of_constants(graph) == []
    assert jitamp.passes.static_scope_obstacles(graph) == []
    assert not jitamp.passes.run("strip_static_scopes", graph)  # idempotent
    assert_unchanged_by(["keep_addmm_whole_in_module", "keep_mms_unbatched"], frozen)
    # what runs here is the stripped graph too (jitamp made the plan again)
    frozen(*inputs(cls))
    ran = torch.jit.last_executed_optimized_graph()
    assert [n.kind() for n in _all_nodes(ran) if n.kind().startswith("jitamp::")
            and n.kind() != "jitamp::direct_call"] == [], ran  # (a direct call calls the graph's op)
    # callers whose autocast is off: none, or a disabled region
    for outer in (None, cpu_autocast(enabled=False)):
        for grad in (True, False):
            with (contextlib.nullcontext() if grad else torch.no_grad()):
                check_against_eager(model, inputs(cls), scripted=frozen, outer=outer, grad=grad)
    # the cast of the input is eager's for every input dtype
    x = inputs(cls)[0]
    for dtype in (torch.float16, torch.bfloat16, torch.float64):
        args = (x.to(dtype),)
        try:
            expected = model(*args)
        except RuntimeError as error:
            with pytest.raises(RuntimeError):
                frozen(*args)
            continue
        oracle.assert_same(expected, frozen(*args), what=str(dtype))


class LinearOfInputs(nn.Module):
    def forward(self, x: Tensor, w: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return torch.nn.functional.linear(x, w)


class Float32OpOfInput(nn.Module):
    def forward(self, x: Tensor, w: Tensor) -> Tensor:  # w: unused
        with torch.autocast("cpu", dtype=torch.bfloat16):
            # avg_pool3d: float32 on CPU, and it takes MKLDNN tensors
            return torch.nn.functional.avg_pool3d(x.reshape(1, 1, 1, 4, 8), 1)


class LinearOfWeight(nn.Module):
    def __init__(self, w: Tensor):
        super().__init__()
        self.w = nn.Parameter(w, requires_grad=False)

    def forward(self, x: Tensor, w: Tensor) -> Tensor:  # w: unused
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return torch.nn.functional.linear(x, self.w)


@pytest.mark.parametrize("kind", [
    "float32", "float16", "bfloat16", "float64", "int64", "complex64", "mixed",
    "mkldnn", "mkldnn_x", "mkldnn_w", "mkldnn_x_frozen_w", "mkldnn_w_frozen",
    "mkldnn_unary_bfloat16"])
def test_standalone_cast_is_eagers_for_every_input(kind):
    # The lowered cast (strip_static_scopes.cpp) decides eligibility with
    # stock ops: floating, not float64, on CPU (MKLDNN tensors are CPU
    # tensors). Eager, on the same inputs, is the expectation; both
    # arguments are graph inputs, so no cast is folded.
    # MKLDNN tensors carry no autocast key: eager casts them only where
    # another tensor of the op does (carriesAutocastKey, cast_ops.h); with
    # a frozen dense weight the lowering knows that ahead ("_frozen_w").
    torch.manual_seed(0)
    x, w = torch.randn(4, 8), torch.randn(6, 8)
    model = LinearOfInputs().eval()
    if kind == "mkldnn_unary_bfloat16":  # an op reading x alone: never autocast
        model = Float32OpOfInput().eval()
        x = x.bfloat16().to_mkldnn()
    elif kind.startswith("mkldnn"):
        x = x.to_mkldnn() if kind in ("mkldnn", "mkldnn_x", "mkldnn_x_frozen_w") else x
        w = w.to_mkldnn() if kind in ("mkldnn", "mkldnn_w", "mkldnn_w_frozen") else w
        if "frozen" in kind:
            model = LinearOfWeight(w).eval()
    elif kind == "mixed":
        x, w = x.half(), w.double()
    else:
        dtype = getattr(torch, kind)
        x, w = (x * 4).to(dtype), (w * 4).to(dtype)
    with torchscript_deprecation_ignored():
        frozen = jitamp.freeze(oracle.script(model), standalone=True)
    assert "jitamp" not in frozen.code
    check_against_eager(model, (x, w), scripted=frozen)


class OpsOfInputs(nn.Module):
    def forward(self, x: Tensor, w: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = torch.nn.functional.linear(x, w)
            return torch.cat([y, y])  # promote


@pytest.mark.parametrize("x_mkldnn", [False, True], ids=["x", "mkldnn_x"])
@pytest.mark.parametrize("w_mkldnn", [False, True], ids=["w", "mkldnn_w"])
@pytest.mark.parametrize("frozen", [False, True], ids=["scripted", "frozen"])
@pytest.mark.parametrize("executor", ["default", "profiling"])
def test_mkldnn_tensors_are_cast_as_eager_casts_them(x_mkldnn, w_mkldnn, frozen, executor):
    # The smart casts leave an MKLDNN tensor to the op's own autocast
    # kernel, which runs only where another of its tensors carries the key
    # (cast_ops.h, carriesAutocastKey); frozen: the weight's cast is not
    # folded when it is an MKLDNN tensor.
    torch.manual_seed(0)
    x, w = torch.randn(4, 8), torch.randn(6, 8)
    x = x.to_mkldnn() if x_mkldnn else x
    w = w.to_mkldnn() if w_mkldnn else w
    model = (LinearOfWeight(w) if frozen else OpsOfInputs()).eval()
    with torchscript_deprecation_ignored():
        scripted = oracle.script(model, profiling_executor=executor == "profiling")
        if frozen:
            scripted = torch.jit.freeze(scripted)
    for outer in (None, torch.no_grad):
        check_against_eager(model, (x, w), scripted=scripted, outer=outer)


# (standalone models promise eager's results to callers whose autocast is
# off only: docs/frozen.md, "Standalone")
@pytest.mark.parametrize("outer,variant", [
    (outer, variant) for outer in OUTERS for variant in ("scripted", "profiling", "frozen", "standalone")
    if variant != "standalone" or outer in ("no_outer", "outer_disabled")])
@pytest.mark.parametrize("cls", [MLP, ConvNet, Dynamic], ids=["mlp", "convnet", "dynamic"])
def test_inference_mode_caller_matches_eager(cls, outer, variant):
    # torch.inference_mode() around the call, as TorchServe calls models:
    # grad mode off, results are inference tensors, and eager's cast cache
    # still keeps the casts of weights that require grad.
    torch.manual_seed(0)
    model = cls().eval()
    with torchscript_deprecation_ignored():
        scripted = oracle.script(model, profiling_executor=variant == "profiling")
        if variant == "frozen":
            scripted = torch.jit.freeze(scripted)
        elif variant == "standalone":
            if cls is Dynamic:
                with pytest.raises(ValueError):
                    jitamp.freeze(scripted, standalone=True)
                return
            scripted = jitamp.freeze(scripted, standalone=True)
    check_against_eager(model, inputs(cls), scripted=scripted,
                        outer=oracle.no_grad_under(OUTERS[outer], torch.inference_mode))


def test_standalone_is_not_exact_under_a_callers_autocast():
    # The promise is for callers whose autocast is off (docs/frozen.md, "Standalone"): no
    # stock op can set the state, so a caller's float16 autocast reaches the
    # ops of the scope, where eager's scope makes them bfloat16.
    model, frozen = standalone(MLP)
    x = inputs(MLP)[0]
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.float16):
        expected, got = model(x), frozen(x)
    assert expected.dtype == torch.bfloat16 and got.dtype == torch.float16


def test_standalone_refuses_dynamic_scopes_and_says_why():
    torch.manual_seed(0)
    scripted = oracle.script(Dynamic().eval())
    with pytest.raises(ValueError) as error:
        with torchscript_deprecation_ignored():
            jitamp.freeze(scripted, standalone=True)
    message = str(error.value)
    assert "needs jitamp's ops" in message
    assert "not a constant" in message  # enabled=flag, no dtype
    assert message.count("test_freeze.py") >= 2, message


class Queries(nn.Module):
    """Autocast state queries inside a static scope: the scope op answers
    them; a graph without it would answer the caller's state."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(8, 8))

    def forward(self, x: Tensor):
        with torch.autocast("cpu", dtype=torch.float16):
            y = torch.mm(x, self.w)
            return y, torch.is_autocast_enabled("cpu"), torch.zeros(1, dtype=torch.get_autocast_dtype("cpu"))


def test_frozen_queries_answer_as_eager():
    torch.manual_seed(0)
    model = Queries().eval()
    frozen = jitamp.freeze(oracle.script(model))
    for outer in (None, lambda: torch.autocast("cpu", dtype=torch.bfloat16)):
        with torch.no_grad():
            oracle.check_against_eager(model.forward, [torch.randn(4, 8)], scripted=frozen, outer=outer)


def test_standalone_refuses_queries_in_a_scope():
    scripted = oracle.script(Queries().eval())
    with pytest.raises(ValueError) as error:
        with torchscript_deprecation_ignored():
            jitamp.freeze(scripted, standalone=True)
    message = str(error.value)
    assert "aten::is_autocast_enabled: an autocast state query in a scope" in message, message
    assert "aten::get_autocast_dtype: an autocast state query in a scope" in message, message


class Unlisted(nn.Module):
    """An op eager autocasts through its decomposition (einsum, Composite-
    ImplicitAutograd without an autocast kernel on CPU: eager's bmm inside
    is cast)."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(8, 8))

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return torch.einsum("ij,jk->ik", x, self.w)


def test_standalone_refuses_composite_ops_eager_autocasts_inside():
    scripted = oracle.script(Unlisted().eval())
    with pytest.raises(ValueError, match="aten::einsum: CompositeImplicitAutograd"):
        with torchscript_deprecation_ignored():
            jitamp.freeze(scripted, standalone=True)


class UnlistedInALoop(Unlisted):
    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            for _ in range(3):
                x = torch.einsum("ij,jk->ik", x, self.w)
            return x


def test_standalone_says_each_obstacle_once():
    # freezing unrolls the loop: three einsums from one source line
    scripted = oracle.script(UnlistedInALoop().eval())
    with pytest.raises(ValueError) as error:
        with torchscript_deprecation_ignored():
            jitamp.freeze(scripted, standalone=True)
    lines = str(error.value).splitlines()[1:]
    assert len(lines) == 1 and lines[0].endswith("(3 times)"), lines
    assert "aten::einsum: CompositeImplicitAutograd" in lines[0]


# policy_table.h's isUncastComposite(): CompositeImplicitAutograd ops
# without an autocast kernel whose decomposition eager does not cast. Each
# must give the same bits under an enabled CPU autocast as with it off.
DECOMPOSE_UNCAST = {
    "aten::flatten.using_ints": lambda x: torch.flatten(x, 1),
    "aten::layer_norm": lambda x: nn.functional.layer_norm(x, [x.shape[-1]], torch.randn(x.shape[-1]),
                                                          torch.randn(x.shape[-1])),
    "aten::batch_norm": lambda x: nn.functional.batch_norm(x, torch.randn(x.shape[1]), torch.rand(x.shape[1]) + 0.5,
                                                          torch.randn(x.shape[1]), torch.randn(x.shape[1])),
    "aten::max_pool2d": lambda x: nn.functional.max_pool2d(x, 2),
    "aten::dropout": lambda x: nn.functional.dropout(x, 0.5, training=False),
    "aten::reshape": lambda x: x.reshape(x.shape[0], -1),
    "aten::softmax.int": lambda x: torch.softmax(x, -1),
    "aten::adaptive_avg_pool2d": lambda x: nn.functional.adaptive_avg_pool2d(x, 1),
    "aten::to.dtype": lambda x: x.to(torch.float32),
    "aten::to.dtype_layout": lambda x: x.to(dtype=torch.float64, device="cpu"),
    "aten::to.device": lambda x: x.to("cpu", torch.float16),
    "aten::to.other": lambda x: x.to(torch.ones(1)),
    "aten::type_as": lambda x: x.type_as(torch.ones(1, dtype=torch.float64)),
    "aten::contiguous": lambda x: x.transpose(1, 2).contiguous(),
    "aten::chunk": lambda x: x.chunk(2, 1),
    "aten::size.int": lambda x: x.size(1),
    "aten::dim": lambda x: x.dim(),
    "aten::numel": lambda x: x.numel(),
    "aten::is_floating_point": lambda x: x.is_floating_point(),
    "aten::expand_as": lambda x: x[:, :1].expand_as(x),
    "aten::view_as": lambda x: x.reshape(-1).view_as(x),
    "aten::narrow": lambda x: x.narrow(1, 1, 2),
    "aten::unflatten.int": lambda x: x.unflatten(1, (2, 2)),
    "aten::movedim.int": lambda x: x.movedim(1, 3),
    "aten::broadcast_tensors": lambda x: torch.broadcast_tensors(x, x[:, :1]),
    "aten::item": lambda x: x[0, 0, 0, 0].item(),
}


def _in_dispatcher(op: str) -> bool:
    try:
        torch._C._dispatch_has_kernel_for_dispatch_key(op, "CompositeImplicitAutograd")
    except RuntimeError as error:  # "operator aten::dim does not exist"
        assert "does not exist" in str(error), error
        return False
    return True


@pytest.mark.parametrize("op", list(DECOMPOSE_UNCAST))
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_decompose_uncast_ops_are_not_cast_by_eager(op, dtype):
    # (aten::dim and aten::numel are TorchScript's own ops, outside the
    # dispatcher, before torch 2.5: the standalone check passes those anyway)
    if _in_dispatcher(op):
        assert torch._C._dispatch_has_kernel_for_dispatch_key(op, "CompositeImplicitAutograd")
        assert not torch._C._dispatch_has_kernel_for_dispatch_key(op, "AutocastCPU")
    else:
        assert op in ("aten::dim", "aten::numel"), op
    fn = DECOMPOSE_UNCAST[op]
    torch.manual_seed(0)
    x = torch.randn(2, 4, 6, 6).to(dtype)
    torch.manual_seed(1)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        under = fn(x)
    torch.manual_seed(1)
    off = fn(x)
    oracle.assert_same(off, under, what=op)


# policy_table.h's kernelCallsAutocastOps(): ops with their own kernel (no
# autocast kernel, no CompositeImplicitAutograd one) that call an op eager
# autocasts, so that a model running them with the state off is not eager's
# (the scaled mms take float8 inputs: not checked here, nor linalg_polar,
# new in torch 2.15).
KERNEL_CALLS_AUTOCAST = ["aten::roll", "aten::isin.Tensor_Tensor", "aten::_chunk_cat",
                         "aten::linalg_pinv.atol_rtol_tensor", "aten::_scaled_mm", "aten::_scaled_mm_v2",
                         "aten::linalg_polar"]  # (torch 2.15)
# Those that return on a float16 tensor without autocast and raise the
# inner cat's promote error under a bfloat16 region (fuzz seed 271129,
# index 6553); linalg_pinv's product runs in bfloat16 there.
RAISES_ON_FLOAT16 = {
    "aten::roll": lambda x: torch.roll(x, 1, 1),
    "aten::isin.Tensor_Tensor": lambda x: torch.isin(x, x.flip(0)),  # sorts both, joined by cat
    "aten::_chunk_cat": lambda x: torch._chunk_cat([x, x], 0, 2),
}


class KernelCallsAutocast(nn.Module):
    def __init__(self, which: int):
        super().__init__()
        self.which = which

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            if self.which == 0:
                y = torch.roll(x, 1, 1)
            elif self.which == 1:
                y = torch.isin(x, x.flip(0)).to(x.dtype)
            elif self.which == 2:
                y = torch._chunk_cat([x, x], 0, 2)
            else:
                y = torch.linalg.pinv(x, atol=torch.tensor(0.0), rtol=torch.tensor(1e-5))
        return y


@pytest.mark.parametrize("op", list(RAISES_ON_FLOAT16))
def test_eager_autocasts_inside_these_kernels(op):
    x = torch.randn(2, 4, 6, 6).half()
    RAISES_ON_FLOAT16[op](x)
    with pytest.raises(RuntimeError, match="Unexpected floating ScalarType in at::autocast::prioritize"):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            RAISES_ON_FLOAT16[op](x)


@pytest.mark.parametrize("which, op", list(enumerate(KERNEL_CALLS_AUTOCAST[:4])))
def test_standalone_refuses_an_op_whose_kernel_calls_one_eager_autocasts(which, op):
    scripted = oracle.script(KernelCallsAutocast(which).eval())
    with pytest.raises(ValueError, match=re.escape(f"{op}: its kernel calls an op eager autocasts")):
        with torchscript_deprecation_ignored():
            jitamp.freeze(scripted, standalone=True)


def test_the_ops_whose_kernels_call_autocast_ops_are_known():
    """PyTorch's OpInfo samples (three of each, float32 and float16), each
    run without autocast and under a CPU bfloat16 region, recorded by the
    profiler there. An op with no autocast kernel, one of whose overloads
    has no CompositeImplicitAutograd kernel, under which an op with an
    AutocastCPU kernel runs, and whose result or error the region changes,
    is in KERNEL_CALLS_AUTOCAST (which the tests above check against
    policy_table's list). (The profiler names no overload; the ops it finds
    whose samples give the same in both states are not checked further.)
    The OpInfo database needs numpy, which the test extra installs (torch
    2.4 to 2.15 do not depend on it)."""
    from torch.autograd.profiler import profile
    from torch.testing._internal.common_methods_invocations import op_db

    found, differ = set(), set()
    for info, dtype in ((info, dtype) for info in op_db for dtype in (torch.float32, torch.float16)):
        try:
            samples = _first_samples(info, dtype, 3)
        except Exception:  # noqa: BLE001 - a sample this torch cannot make
            continue
        for sample in samples:
            outcomes = []
            for region in (False, True):
                torch.default_generator.manual_seed(0)  # (the ops run on the CPU)
                try:
                    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=region), \
                            profile() as prof:
                        outcomes.append(info.op(sample.input, *sample.args, **sample.kwargs))
                except Exception as error:  # noqa: BLE001 - eager's error is an outcome too
                    outcomes.append(type(error))
            top = [event for event in prof.function_events
                   if event.cpu_parent is None and event.name.startswith("aten::")]
            for event in top:
                inner, nested = [], list(event.cpu_children)
                while nested:
                    inner.append(nested.pop())
                    nested.extend(inner[-1].cpu_children)
                if (any(child.name.startswith("aten::") and _has_kernel(child.name, "AutocastCPU")
                        for child in inner)
                        and not _has_kernel(event.name, "AutocastCPU")
                        and not all(_has_kernel(event.name, "CompositeImplicitAutograd", overload)
                                    for overload in _overloads(event.name))):
                    found.add(event.name)
                    if len(top) == 1 and not _same_outcome(*outcomes):  # the outcome is its own
                        differ.add(event.name)
    assert "aten::roll" in found and "aten::roll" in differ  # (float16)
    assert sorted(differ - {op.split(".")[0] for op in KERNEL_CALLS_AUTOCAST}) == []


def _first_samples(info, dtype: torch.dtype, count: int) -> list:
    """The first `count` CPU samples of OpInfo `info`, as its sample_inputs
    makes them (the same seeds before each), without its bookkeeping: that
    walks the stack for a unittest test twice a call, and seeds every
    device's generator through torch.manual_seed, which keeps a traceback
    for each device not yet initialized (three quarters of this test's 220
    s, with every sample made where three are used)."""
    import random

    import numpy
    from torch.testing._internal.common_utils import SEED

    samples, first = iter(info.sample_inputs_func(info, "cpu", dtype, False)), []
    for _ in range(count):
        torch.default_generator.manual_seed(SEED)
        random.seed(SEED)
        numpy.random.seed(SEED)
        sample = next(samples, None)
        if sample is None:
            break
        first.append(sample)
    return first


def _same_outcome(a, b) -> bool:
    """The same error class, equal scalars, or tensors of the same dtypes and shapes whose
    values are close: a bfloat16 step inside gives differences of about
    1e-2, a LAPACK kernel's on another allocation's alignment about 1e-7
    (linalg_lstsq, in any state)."""
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return (a.dtype == b.dtype and a.shape == b.shape
                and torch.allclose(*(torch.view_as_real(t) if t.is_complex() else t.double() for t in (a, b)),
                                   rtol=1e-4, atol=1e-5, equal_nan=True))
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same_outcome(x, y) for x, y in zip(a, b))
    if isinstance(a, type) or isinstance(b, type):  # an error's class
        return a is b
    return type(a) is type(b) and (a == b or a != a and b != b)  # a scalar (NaN equals NaN)


def _overloads(name: str) -> list[str]:
    """The overloads of aten op `name` the dispatcher has (TorchScript
    registers more: aten::all.int, of a list)."""
    return [schema.overload_name for schema in torch._C._jit_get_schemas_for_operator(name)
            if _in_dispatcher(f"{name}.{schema.overload_name}" if schema.overload_name else name)]


def _has_kernel(name: str, key: str, overload: str | None = None) -> bool:
    """Whether aten op `name`'s `overload` (by default: any of them) has a kernel for `key`."""
    overloads = _overloads(name) if overload is None else [overload]
    return any(torch._C._dispatch_has_kernel_for_dispatch_key(f"{name}.{o}" if o else name, key)
               for o in overloads)


STOCK_PROGRAM = """
import sys
import torch
m = torch.jit.load({path!r})
assert "jitamp" not in sys.modules
# (op names: a graph's source comments hold paths, e.g. a venv's "jitamp-matrix")
assert "jitamp" not in m.code and "jitamp::" not in str(m.graph)
x, expected = torch.load({data!r}, weights_only=True)
for i in range(10):
    with torch.no_grad():
        got = m(x)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert torch.equal(got, expected), (got - expected).abs().max()
    got = m(x)
    assert torch.equal(got, expected)
print("done")
"""


@pytest.mark.parametrize("cls", [MLP, ConvNet, Conv1D, SummedMMs],
                         ids=["mlp", "convnet", "conv1d", "summed_mms"])
def test_standalone_runs_in_stock_torch_without_jitamp(cls, tmp_path):
    model, frozen = standalone(cls)
    x = inputs(cls)[0]
    with torch.no_grad():
        expected = model(x)
    with torchscript_deprecation_ignored():
        torch.jit.save(frozen, str(tmp_path / "frozen.pt"))
    torch.save((x, expected), str(tmp_path / "data.pt"))
    done = oracle.run_program(tmp_path, textwrap.dedent(STOCK_PROGRAM).format(
        path=str(tmp_path / "frozen.pt"), data=str(tmp_path / "data.pt")))
    assert done.returncode == 0 and done.stdout.strip().endswith("done"), done.stderr[-3000:]


STOCK_OPTIMIZED_PROGRAM = """
import sys
import torch
m = torch.jit.load({path!r})
assert "jitamp" not in sys.modules
x, expected = torch.load({data!r}, weights_only=True)
with torch.no_grad():
    assert torch.equal(m(x), expected)
    optimized = torch.jit.optimize_for_inference(m)
    got = [optimized(x) for _ in range(3)][-1]
kinds = {{n.kind() for n in optimized.graph.nodes()}}
print(got.dtype, "aten::linear" in kinds, "aten::matmul" in kinds, torch.equal(got, expected))
"""


def test_standalone_through_torchs_optimize_for_inference_is_torchs(tmp_path):
    """What docs/frozen.md says of a standalone model served through
    torch.jit.optimize_for_inference without jitamp: torch's own passes,
    which see its folded cast weights, make each linear of a constant
    weight a matmul and an add (FrozenLinearTranspose), where the model as
    saved is eager's. (Whether that rounds differently from eager's linear
    depends on the CPU's bfloat16 kernels: not asserted.)"""
    model, frozen = standalone(MLP)
    x = inputs(MLP)[0]
    with torch.no_grad():
        expected = model(x)
    with torchscript_deprecation_ignored():
        torch.jit.save(frozen, str(tmp_path / "frozen.pt"))
    torch.save((x, expected), str(tmp_path / "data.pt"))
    done = oracle.run_program(tmp_path, textwrap.dedent(STOCK_OPTIMIZED_PROGRAM).format(
        path=str(tmp_path / "frozen.pt"), data=str(tmp_path / "data.pt")))
    assert done.returncode == 0, done.stderr[-3000:]
    dtype, linear, matmul, _ = done.stdout.split()
    assert (dtype, linear, matmul) == (str(expected.dtype), "False", "True"), done.stdout


# (An error raised in code that freezing inlined from a submodule:
# tests/test_repairs.py, repair_frozen_call_stacks.)


class EarlyExitInScope(nn.Module):
    """An early return inside a scope that freezing's constant condition
    brings to the top level: TorchScript's exit transform puts the scope's
    exit and the code after the `with` in two ifs on its flags, so the code
    after it may run with the scope open or closed on other paths (fuzz
    finding 12: the conv's weight was cast under the scope's float16)."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 4))
        self.on = True

    def forward(self, x: Tensor, flag: bool) -> Tuple[Tensor, List[Tensor]]:
        sink: List[Tensor] = []
        if self.on:
            with torch.autocast("cpu", dtype=torch.float16):
                if flag:
                    pass
                else:
                    if flag:
                        return x, sink
        sink.append(nn.functional.conv1d(self.w.unsqueeze(0), x.unsqueeze(2), x[0]).squeeze(0))
        return x, sink


@pytest.mark.parametrize("outer", list(OUTERS))
def test_code_a_scope_may_have_exited_before_is_not_static(outer):
    model, frozen = frozen_and_eager(EarlyExitInScope)
    # the weight's cast is the caller's, not done at freezing: no float16
    # constant, one float32 weight behind a cast
    dtypes = [n.output().toIValue().dtype for n in frozen.graph.findAllNodes("prim::Constant")
              if n.output().type().kind() == "TensorType"]
    assert dtypes == [torch.float32] and len(casts_of_constants(frozen.graph)) == 1, frozen.graph
    with torch.no_grad():
        for flag in (True, False):
            check_against_eager(model, (torch.randn(4, 4), flag), scripted=frozen, outer=OUTERS[outer])
    with pytest.raises(ValueError, match="early exit"):
        with torchscript_deprecation_ignored():
            jitamp.freeze(oracle.script(EarlyExitInScope().eval()), standalone=True)


def _cross_version_script():
    """scripts/cross_version.py, imported by path: its models are the ones
    a model saved with one torch and run on another is checked with."""
    path = os.path.join(os.path.dirname(__file__), os.pardir, "scripts", "cross_version.py")
    spec = importlib.util.spec_from_file_location("cross_version", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # TorchScript reads the classes' source through it
    spec.loader.exec_module(module)
    return module


# An op torch versions autocast differently (aten::_addmm_activation:
# lower_precision_fp on CPU from torch 2.6 on, not in 2.4): a model frozen
# on one torch may be loaded on another, which casts as it does.
AddmmActivation = _cross_version_script().AddmmActivation


@pytest.mark.parametrize("outer", list(OUTERS))
def test_casts_for_ops_torch_versions_autocast_differently_stay(outer):
    model, frozen = frozen_and_eager(AddmmActivation)
    graph = frozen.graph

    def constant_dtypes(op: str) -> set:
        """Dtypes of the constant tensors `op` reads, directly or through a
        smart cast (cast at each call, by the torch running it)."""
        found = set()
        for node in graph.findAllNodes(op):
            for value in node.inputs():
                while value.node().kind() in SMART_CASTS:
                    value = value.node().inputsAt(0)
                if value.node().kind() == "prim::Constant" and value.type().kind() == "TensorType":
                    found.add(value.toIValue().dtype)
        return found

    # _addmm_activation reads its weights as frozen, not cast at freezing;
    # and it is not done at freezing where all it reads is frozen
    assert constant_dtypes("aten::_addmm_activation") == {torch.float32}, graph
    assert len(graph.findAllNodes("aten::_addmm_activation")) == 2, graph
    # mm's weight is cast once, at freezing
    assert constant_dtypes("aten::mm") == {torch.bfloat16}, graph
    for grad in GRAD.values():
        with grad():
            check_against_eager(model, (torch.randn(4, 8),), scripted=frozen, outer=OUTERS[outer])


def test_standalone_refuses_ops_torch_versions_autocast_differently():
    torch.manual_seed(0)
    scripted = oracle.script(AddmmActivation().eval())
    with pytest.raises(ValueError) as error:
        with torchscript_deprecation_ignored():
            jitamp.freeze(scripted, standalone=True)
    message = str(error.value)
    assert ("aten::_addmm_activation: torch versions autocast it differently (autocast on cpu in "
            "torch 2.6.0 to 2.15.0; not in 2.4.1 to 2.5.1)") in message, message


def test_cross_version_script_on_one_torch(tmp_path):
    """scripts/cross_version.py saves and checks on the installed torch
    alone: every model equal to eager (scripts/cross_version.sh runs it
    between two)."""
    script = os.path.join(os.path.dirname(__file__), os.pardir, "scripts", "cross_version.py")
    for step in ("save", "check"):
        done = subprocess.run([sys.executable, script, step, str(tmp_path)], capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
    assert "all equal to eager (models: 4, functions: 1;" in done.stdout, done.stdout
