"""Modules: methods, submodules, parameter gradients, exported methods,
freezing, save / load."""
import io

import pytest
import torch
import torch.nn as nn
from torch import Tensor

import jitamp
import oracle
from oracle import check_against_eager, cpu_autocast
from scenario_helpers import OUTERS, WARNING_FILTERS, X, rand

pytestmark = WARNING_FILTERS


# Methods and submodules called in a scope

class MethodModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(rand(4, 4, seed=5))

    def helper(self, x: Tensor) -> Tensor:
        return torch.mm(x, self.w)

    def scoped_helper(self, x: Tensor) -> Tensor:
        # cache off here; with it on, eager reuses the bf16 cast of self.w
        # cached by the enclosing bf16 scope (as jitamp does: see
        # test_nesting.py::test_nested_dtype_stale_weight_cache).
        with torch.autocast("cpu", dtype=torch.float16, cache_enabled=False):
            r = torch.mm(x, self.w)
        return r

    def forward(self, x: Tensor):
        a = self.helper(x)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            b = self.helper(x)
            c = self.scoped_helper(x)
        return a, b, c, self.scoped_helper(x)


# outer_fp16: the eager float16 region caches the float16 cast of self.w,
# and the scripted bfloat16 scope inside it gets that cast from eager's cache
# (test_nesting.py::test_nested_dtype_stale_weight_cache), as eager's does.
@pytest.mark.parametrize("outer", ["no_outer", "outer_bf16", "outer_fp16"])
def test_module_methods(outer):
    m = MethodModule()
    check_against_eager(m, [X], scripted=oracle.script(m), outer=OUTERS[outer], grad=True)


class ScopedSub(nn.Module):
    """forward wraps the submodule call in a bf16 autocast scope."""

    def __init__(self, sub: nn.Module, post: bool = True):
        super().__init__()
        self.sub = sub
        self.post = post

    def forward(self, x: Tensor):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = self.sub(x)
        if self.post:
            return y, y * 2.0
        return y, y


def _linear():
    torch.manual_seed(0)
    return nn.Linear(8, 6)


def _conv():
    torch.manual_seed(0)
    return nn.Conv2d(3, 5, 3, bias=True)


def _layernorm():
    torch.manual_seed(0)
    ln = nn.LayerNorm(8)
    with torch.no_grad():
        ln.weight.copy_(torch.rand(8) + 0.5)
        ln.bias.copy_(torch.randn(8))
    return ln


class LinearThenLayerNorm(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.lin = nn.Linear(8, 8)
        self.ln = _layernorm()

    def forward(self, x: Tensor):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            h = self.lin(x)
            y = self.ln(h)
        return h, y


SUBMODULES = {
    "linear": (_linear, lambda: rand(5, 8, seed=7)),
    "conv2d": (_conv, lambda: rand(2, 3, 8, 8, seed=7)),
    "layernorm": (_layernorm, lambda: rand(5, 8, seed=7)),
}


@pytest.mark.parametrize("name", list(SUBMODULES))
@pytest.mark.parametrize("grad", [False, True], ids=["nograd", "grad"])
def test_submodule_in_scope(name, grad):
    make, make_x = SUBMODULES[name]
    m = ScopedSub(make())
    check_against_eager(m, [make_x()], scripted=oracle.script(m), grad=grad)


@pytest.mark.parametrize("outer", ["no_outer", "outer_fp16"])
def test_linear_then_layernorm_grad(outer):
    m = LinearThenLayerNorm()
    check_against_eager(m, [rand(5, 8, seed=8)], scripted=oracle.script(m), grad=True,
                        outer=OUTERS[outer])


def _assert_param_grads_match(m: nn.Module, scripted, make_x, calls: int = 3) -> None:
    """The oracle checks input gradients; parameter gradients (shared by the
    eager module and its scripted copy) are compared here."""
    for call in range(1, calls + 1):
        grads, errors = [], []
        for runner in (m, scripted):
            m.zero_grad(set_to_none=True)
            try:
                ys = runner(make_x().requires_grad_(True))
                sum(y.float().sum() for y in ys).backward()
                errors.append(None)
            except RuntimeError as error:  # eager may raise (e.g. torch 2.9's
                errors.append(error)       # cast cache); then scripted must too
            grads.append([p.grad for p in m.parameters()])
        if errors != [None, None]:
            assert None not in errors, f"call {call}: only one side raised: {errors}"
            oracle.assert_same_error(*errors, where=f"call {call} backward")
            continue
        for k, (ge, gs) in enumerate(zip(*grads)):
            assert (ge is None) == (gs is None), f"call {call} param grad[{k}] None on one side"
            if ge is not None:
                oracle.assert_same(ge, gs, what=f"call {call} param grad[{k}]")


@pytest.mark.parametrize("name", list(SUBMODULES))
def test_submodule_parameter_grads(name):
    make, make_x = SUBMODULES[name]
    m = ScopedSub(make())
    _assert_param_grads_match(m, oracle.script(m), make_x)


def test_linear_then_layernorm_parameter_grads():
    m = LinearThenLayerNorm()
    _assert_param_grads_match(m, oracle.script(m), lambda: rand(5, 8, seed=8))


class NoGradInScope(nn.Module):
    """torch.no_grad() inside a scope: eager's cast cache is shared between
    the no-grad and the grad-mode use of the same parameter."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(rand(4, 4, seed=9))

    def forward(self, x: Tensor):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            with torch.no_grad():
                a = torch.mm(x, self.w)
            b = torch.mm(x, self.w)
        return a, b


def test_no_grad_inside_scope():
    m = NoGradInScope()
    scripted = oracle.script(m)
    check_against_eager(m, [X], scripted=scripted, grad=True)
    _assert_param_grads_match(m, scripted, lambda: X.clone())


class MHAModule(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.mha = nn.MultiheadAttention(8, 2, dropout=0.0, batch_first=True)

    def forward(self, q: Tensor, k: Tensor, v: Tensor):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out, w = self.mha(q, k, v)
        return out, w


@pytest.mark.parametrize("mode", ["train", "eval"])
@pytest.mark.parametrize("grad", [False, True], ids=["nograd", "grad"])
def test_multihead_attention(mode, grad):
    m = MHAModule()
    m.train(mode == "train")
    q, k, v = (rand(2, 5, 8, seed=s) for s in (10, 11, 12))
    check_against_eager(m, [q, k, v], scripted=oracle.script(m), grad=grad)


@pytest.mark.parametrize("mode", ["train", "eval"])
def test_multihead_attention_no_grad_mode(mode):
    # Under torch.no_grad() eval-mode MHA may take the fused fast path (eager
    # decides from the autocast state, which the scripted code must match).
    m = MHAModule()
    m.train(mode == "train")
    q = rand(2, 5, 8, seed=10)
    check_against_eager(m, [q, q, q], scripted=oracle.script(m), outer=torch.no_grad)


class LSTMModule(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.lstm = nn.LSTM(6, 5, num_layers=2, batch_first=True)

    def forward(self, x: Tensor):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out, (h, c) = self.lstm(x)
        return out, h, c


@pytest.mark.parametrize("mode", ["train", "eval"])
@pytest.mark.parametrize("grad", [False, True], ids=["nograd", "grad"])
def test_lstm(mode, grad):
    m = LSTMModule()
    m.train(mode == "train")
    check_against_eager(m, [rand(2, 4, 6, seed=13)], scripted=oracle.script(m), grad=grad)


# Exported methods, freezing, save / load

class ExportedScopes(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.lin = nn.Linear(4, 4)

    @torch.jit.export
    def half(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.float16):
            r = self.lin(x)
        return r

    def forward(self, x: Tensor):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            r = self.lin(x)
        return r, self.half(x)


def test_exported_method():
    m = ExportedScopes()
    scripted = oracle.script(m)
    check_against_eager(m.half, [X], scripted=scripted.half, outer=cpu_autocast(torch.bfloat16))
    check_against_eager(m, [X], scripted=scripted)


def test_frozen_module():
    m = ExportedScopes().eval()
    frozen = torch.jit.freeze(oracle.script(m))
    check_against_eager(m, [X], scripted=frozen)


def test_save_load_rewritten_module():
    m = ExportedScopes()
    buf = io.BytesIO()
    torch.jit.save(oracle.script(m), buf)
    buf.seek(0)
    check_against_eager(m, [X], scripted=torch.jit.load(buf))


def test_save_load_then_rewrite():
    m = ExportedScopes()
    buf = io.BytesIO()
    torch.jit.save(torch.jit.script(m), buf)  # scripted without jitamp
    buf.seek(0)
    loaded = jitamp.load(buf)
    check_against_eager(m, [X], scripted=loaded)
