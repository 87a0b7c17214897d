"""Every TorchScript executor gives eager's results on jitamp graphs."""
import contextlib
import copy

import pytest
import torch
from torch import nn

from oracle import check_against_eager, cpu_autocast, script


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.norm = nn.LayerNorm(8)

    def forward(self, x, flag: bool):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=flag):
            h = self.norm(self.fc(x))
            with torch.autocast("cpu", enabled=False):
                s = torch.mm(h.float(), h.float().t())
            y = torch.softmax(h, -1) + s.sum()
        return y


@contextlib.contextmanager
def executor(name):
    """TorchScript's executor settings, restored afterwards."""
    if name == "profiling":
        yield
    elif name == "legacy":
        previous = torch._C._jit_set_profiling_executor(False)
        try:
            yield
        finally:
            torch._C._jit_set_profiling_executor(previous)
    elif name == "simple":
        previous = torch._C._jit_set_profiling_mode(False)
        try:
            yield
        finally:
            torch._C._jit_set_profiling_mode(previous)
    elif name == "optimized_execution_off":
        with torch.jit.optimized_execution(False):
            yield


EXECUTORS = ["profiling", "legacy", "simple", "optimized_execution_off"]


@pytest.mark.parametrize("profiling_executor", [False, True], ids=["jitamp_default", "jitamp_profiling"])
@pytest.mark.parametrize("name", EXECUTORS)
def test_executor_matches_eager(name, profiling_executor):
    torch.manual_seed(0)
    model = Model()
    x = torch.randn(4, 8)
    with executor(name):
        scripted = script(copy.deepcopy(model), profiling_executor=profiling_executor)
        flags = lambda i: (x, i % 3 != 0)  # noqa: E731
        with torch.no_grad():
            check_against_eager(model, (x, True), scripted=scripted, args_for_call=flags)
            check_against_eager(model, (x, True), scripted=scripted, args_for_call=flags,
                                outer=cpu_autocast(torch.float16))
        # Training too: with profiling_executor=True, TorchScript's symbolic
        # autodiff, whose differentiable subgraphs end at jitamp's casts and
        # at the results of low-precision ops (ProfilingExecutorPlan).
        check_against_eager(model, (x, True), scripted=scripted, args_for_call=flags, grad=True)


class Residual(nn.Module):
    """Mixed dtypes meet inside what symbolic autodiff would make one
    differentiable subgraph: a float32 residual plus a bfloat16 linear's
    result, plus a bfloat16 matmul of a float32 softmax's result."""

    def __init__(self):
        super().__init__()
        self.up, self.down = nn.Linear(8, 16), nn.Linear(16, 8)

    def forward(self, x, flag: bool):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=flag):
            h = x + self.down(torch.relu(self.up(x)))
            a = torch.softmax(torch.mm(h, h.t()), -1)
            y = h + torch.mm(a, h)
        return y


class ConvNorm(nn.Module):
    """A batch norm between a bfloat16 conv and a float32 residual: the
    norm's backward, in the conv's subgraph, must get the residual's
    gradient cast to bfloat16."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 2, 3, padding=1)
        self.bn = nn.BatchNorm2d(2)

    def forward(self, x, flag: bool):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=flag):
            y = x + self.bn(self.conv(x))
        return y


def _profiling_training(model, x, name, **tolerance):
    with executor(name):
        scripted = script(copy.deepcopy(model), profiling_executor=True)
        check_against_eager(model, (x, True), scripted=scripted, grad=True,
                            args_for_call=lambda i: (x, i % 3 != 0), **tolerance)
        check_against_eager(model, (x, True), scripted=scripted, grad=True,
                            outer=cpu_autocast(torch.float16), **tolerance)


@pytest.mark.parametrize("name", EXECUTORS)
def test_profiling_executor_training_matches_eager(name):
    """jitamp.enable(profiling_executor=True) in training. TorchScript's
    symbolic autodiff passed add's float32 gradient to the backward of
    linear, or of a batch norm after a bfloat16 conv, uncast ("expected m1
    and m2 to have the same dtype"). With ProfilingExecutorPlan's
    boundaries, eager's engine casts it as in eager: gradients are eager's,
    bitwise, where no value is read twice in a subgraph."""
    torch.manual_seed(0)
    _profiling_training(ConvNorm(), torch.randn(1, 2, 4, 4), name)


@pytest.mark.parametrize("name", EXECUTORS)
def test_profiling_executor_training_sums_in_its_order(name):
    """A value read by several ops of one differentiable subgraph (h, below
    a residual, in the attention) gets its gradient summed in the
    subgraph's order, not eager's engine's: low bits differ (bfloat16's
    rounding), dtypes are eager's."""
    torch.manual_seed(0)
    _profiling_training(Residual(), torch.randn(4, 8), name, grad_exact=False, rtol=0.02, atol=0.02)


def test_optimized_graph_keeps_smart_casts_after_profiling():
    torch.manual_seed(0)
    model = Model().eval()
    scripted = script(model, profiling_executor=True)
    x = torch.randn(4, 8)
    with torch.no_grad():
        check_against_eager(model, (x, True), scripted=scripted)
        scripted(x, True)
        graph = torch.jit.last_executed_optimized_graph()
    text = str(graph)
    assert "prim::profile" not in text, "the graph is the optimized plan"
    for kind in ("jitamp::autocast_enter", "jitamp::autocast_exit", "jitamp::autocast_to_fp16",
                 "jitamp::autocast_to_fp32"):
        assert kind in text, kind
