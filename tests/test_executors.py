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
        # Inference on both; training only where jitamp controls autograd
        # (the profiling executor's symbolic autodiff is not eager-exact).
        with torch.no_grad():
            check_against_eager(model, (x, True), scripted=scripted, args_for_call=flags)
            check_against_eager(model, (x, True), scripted=scripted, args_for_call=flags,
                                outer=cpu_autocast(torch.float16))
        if not profiling_executor:
            check_against_eager(model, (x, True), scripted=scripted, args_for_call=flags, grad=True)


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
