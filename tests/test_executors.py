"""Every TorchScript executor gives eager's results on jitamp graphs."""
import contextlib
import copy
from typing import List, Tuple

import pytest
import torch
import torch.nn.functional as F
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


def _addmm_with(b, x, w, beta: float):
    return torch.addmm(b, x, w, beta=beta)


class Addmm(nn.Module):
    """addmm with beta = alpha = 1: as defaults, as constants, and as an
    argument of a callee that the caller passes 1."""

    def forward(self, b, x, w, flag: bool):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=flag):
            y = torch.addmm(b, x, w)
            z = torch.addmm(b, x, w, beta=1, alpha=1.0)
            u = _addmm_with(b, x, w, 1.0)
        return y, z, u, torch.addmm(b, x, w)


@pytest.mark.parametrize("profiling_executor", [False, True], ids=["jitamp_default", "jitamp_profiling"])
@pytest.mark.parametrize("name", EXECUTORS)
def test_addmm_is_one_op_under_every_executor(name, profiling_executor):
    """The profiling executor's DecomposeOps (and the legacy one's) split an
    addmm whose beta and alpha are the constant 1 into mm + add, rounding
    twice (plain TorchScript too): 0.25 apart from eager on this 64x64
    bfloat16 result, 1 ulp at float32. ProfilingExecutorPlan reads beta
    through a barrier no pass folds, so the op stays whole: bitwise eager,
    in and out of the scope, with and without gradients."""
    torch.manual_seed(0)
    model = Addmm()
    args = [torch.randn(64, 64) for _ in range(3)]
    with executor(name):
        scripted = script(copy.deepcopy(model), profiling_executor=profiling_executor)
        for_call = lambda i: (*args, i % 3 != 0)  # noqa: E731
        with torch.no_grad():
            check_against_eager(model, (*args, True), scripted=scripted, args_for_call=for_call)
        check_against_eager(model, (*args, True), scripted=scripted, args_for_call=for_call, grad=True)


def early_return_in_loop(x: torch.Tensor, flag: bool, n: int) -> Tuple[torch.Tensor, List[torch.Tensor]]:
    sink: List[torch.Tensor] = []
    v = x
    for _ in range(n):
        if flag:
            return v, sink
        v = F.linear(x, x)
        sink.append(v)
    v = torch.linalg.vector_norm(x, dim=[1], keepdim=True) + v
    return x, sink + [v]


@pytest.mark.parametrize("name", EXECUTORS)
def test_value_uninitialized_after_an_early_exit(name):
    """`v` leaves the loop uninitialized when the loop returns early, and
    the add after the loop then never runs. ProfilingExecutorPlan reads a
    low-precision value (linear's) through a boundary where it meets
    another tensor: made right after the loop, the boundary ran on the
    uninitialized value and raised "Expected Tensor but got Uninitialized"
    at the first call (fuzz seed 1129, index 514); made right before the
    add, it runs where the add does."""
    x = torch.randn(4, 4)
    with executor(name):
        scripted = script(early_return_in_loop, profiling_executor=True)
        for outer in (None, cpu_autocast()):
            check_against_eager(early_return_in_loop, (x, True, 3), scripted=scripted, outer=outer,
                                args_for_call=lambda i: (x, i % 2 == 1, 3))


def softmax_to_float32(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    with torch.autocast("cpu", dtype=torch.float16):
        s = torch.mm(x, y)
        return torch.softmax(s, -1, dtype=torch.float32).clamp(0.1, 0.9) * 2.0


def softmax_of_bfloat16_plus_float32(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        p = torch.softmax(torch.mm(x, y), -1)
        return torch.mv(y.t(), x[0]).unsqueeze(0) + p


@pytest.mark.parametrize("name", EXECUTORS)
def test_softmax_with_dtype_of_a_low_precision_value_trains(name):
    """softmax(dtype=float32) of float16 attention scores, as attention code
    writes it. TorchScript's symbolic formula for it passes self.dtype
    (float16) with a float32 gradient to _softmax_backward_data, which
    fails ("expected scalar type Float but found Half"; plain TorchScript
    too, with a float16 input; fuzz seed 1131, index 5305).
    ProfilingExecutorPlan keeps an op that converts a low-precision value
    to a dtype out of every differentiable subgraph (the clamp after it
    would make one with it), so eager's engine runs its backward."""
    torch.manual_seed(0)
    x, y = torch.randn(4, 8), torch.randn(8, 4)
    with executor(name):
        scripted = script(softmax_to_float32, profiling_executor=True)
        check_against_eager(softmax_to_float32, (x, y), scripted=scripted, grad=True)


@pytest.mark.parametrize("name", EXECUTORS)
def test_cuda_only_float32_cast_keeps_a_cpu_value_low(name):
    """softmax's float32 row names CUDA only: on CPU its cast leaves the
    bfloat16 scores as they are, and softmax's bfloat16 result meets a
    float32 tensor in the add. ProfilingExecutorPlan took every float32
    cast's result for float32, put no boundary there, and add's float32
    gradient reached softmax's backward in one subgraph ("expected scalar
    type Float but found BFloat16"; fuzz seed 1132, index 1208)."""
    torch.manual_seed(0)
    x, y = torch.randn(4, 8), torch.randn(8, 4)
    with executor(name):
        scripted = script(softmax_of_bfloat16_plus_float32, profiling_executor=True)
        check_against_eager(softmax_of_bfloat16_plus_float32, (x, y), scripted=scripted, grad=True)


def layer_norm_without_affine(x: torch.Tensor) -> List[torch.Tensor]:
    y = F.layer_norm(x, [4])
    return [y, torch.tanh(y)]


@pytest.mark.parametrize("name", EXECUTORS)
def test_layer_norm_without_weight_and_bias_trains(name):
    """F.layer_norm with no weight and bias: inlined, its casts of weight
    and bias are casts of the one None constant, which CSE merged into one
    optional value; symbolic autodiff then took layer_norm's weight and
    bias for one input, and x's gradient came back 0.88 off eager's
    (fuzz seed 1133, index 3692). jitamp's preoptimization removes casts
    of None. (Float32 throughout: the subgraph sums y's two gradients in
    its own order, so the last bit may differ.)"""
    torch.manual_seed(0)
    x = torch.randn(4, 4)
    with executor(name):
        scripted = script(layer_norm_without_affine, profiling_executor=True)
        check_against_eager(layer_norm_without_affine, (x,), scripted=scripted, grad=True,
                            grad_exact=False, rtol=1e-5, atol=1e-6)


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
