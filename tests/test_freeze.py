"""Frozen inference: casts of frozen weights under a static autocast state
are done once, when the module is frozen (csrc/jit_autocast/fold_static_casts.h),
and the frozen model still computes what eager autocast computes on the
original module, for callers in any autocast state (docs/design.md, "Frozen
inference")."""
import contextlib
import textwrap

import pytest
import torch
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
    assert not jitamp.passes.FROZEN[0][1](graph)
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


def test_a_frozen_module_that_has_run_is_not_folded_silently():
    torch.manual_seed(0)
    scripted = oracle.script(MLP().eval())
    with torchscript_deprecation_ignored():
        frozen = torch.jit.freeze(scripted)
    frozen(inputs(MLP)[0])
    # Folded before the first call: folding again changes nothing, fine.
    assert jitamp._C.fold_static_casts_in_module(frozen._c) == []


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
x, expected, expected_fp16 = torch.load({data!r})
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
