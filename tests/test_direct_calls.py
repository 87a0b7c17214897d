"""jitamp::direct_call (csrc/jit_autocast/ops/direct_call.h): in the simple
executor's plan, an op whose autocast kernel only casts (lower_precision_fp,
fp32, promote) is called in one dispatch, with that kernel's casts made by
jitamp's op itself, where eager dispatches twice (the kernel, then the op
below it). Each case is one where the kernel's decision matters: what it
casts, to what, what it leaves, when it raises, and which key it is."""
from typing import List, Optional, Tuple

import pytest
import torch
import torch.nn.functional as F

import jitamp
from oracle import check_against_eager, script

BF16 = lambda: torch.autocast("cpu", dtype=torch.bfloat16)  # noqa: E731
FP16 = lambda: torch.autocast("cpu", dtype=torch.float16)  # noqa: E731


def _t(seed: int, *shape: int, dtype=torch.float32) -> torch.Tensor:
    return torch.randn(*(shape or (4, 4)), generator=torch.Generator().manual_seed(seed)).to(dtype)


def lower(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return torch.mm(torch.mm(x, w), w)


def lower_no_scope(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.mm(torch.mm(x, w), w)


def fp32_policy(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return torch.cdist(torch.mm(x, w), w)


def promote(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return torch.cat([torch.mm(x, w), w, x], 0)


def promote_list_is_shared(x: torch.Tensor, w: torch.Tensor) -> Tuple[torch.Tensor, List[torch.Tensor]]:
    # the kernel casts a copy of the list: the program's list keeps its tensors
    with torch.autocast("cpu", dtype=torch.bfloat16):
        xs = [torch.mm(x, w), w]
        return torch.cat(xs, 1), xs


def optional_bias(x: torch.Tensor, w: torch.Tensor, b: Optional[torch.Tensor]) -> torch.Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return F.linear(F.conv2d(x, w, b), x.flatten(0, 2)[:5])


def switched_off_inside(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = torch.mm(x, w)
        with torch.autocast("cpu", enabled=False):
            z = torch.mm(y.float(), w)
        return torch.mm(z, y)


def cuda_policy_only(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    # addmv: lower_precision_fp under CUDA autocast, no kernel on CPU
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return torch.addmv(x[0], w, x[1])


CASES = {
    "lower fp32": (lower, [_t(1), _t(2)]),
    "lower float16 input": (lower, [_t(1, dtype=torch.float16), _t(2)]),
    "lower float64 passes": (lower, [_t(1, dtype=torch.float64), _t(2, dtype=torch.float64)]),
    "lower bfloat16": (lower, [_t(1, dtype=torch.bfloat16), _t(2, dtype=torch.bfloat16)]),
    "fp32": (fp32_policy, [_t(1), _t(2)]),
    "promote": (promote, [_t(1), _t(2)]),
    "promote float64": (promote, [_t(1, dtype=torch.float64), _t(2)]),
    "promote raises": (promote, [_t(1, dtype=torch.float16), _t(2, dtype=torch.float16)]),
    "shared list": (promote_list_is_shared, [_t(1), _t(2)]),
    "optional given": (optional_bias, [_t(1, 2, 3, 5, 5), _t(2, 4, 3, 3, 3), _t(3, 4)]),
    "optional None": (optional_bias, [_t(1, 2, 3, 5, 5), _t(2, 4, 3, 3, 3), None]),
    "off inside": (switched_off_inside, [_t(1), _t(2)]),
    "other device's policy": (cuda_policy_only, [_t(1), _t(2)]),
    "shapes raise": (lower, [_t(1, 4, 3), _t(2)]),
}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("outer", [None, torch.no_grad], ids=["grad", "no_grad"])
def test_against_eager(case, outer):
    fn, args = CASES[case]
    check_against_eager(fn, args, outer=outer, grad=outer is None)


@pytest.mark.parametrize("region", [BF16, FP16], ids=["bfloat16", "float16"])
def test_a_function_without_a_scope_in_an_eager_region(region):
    """The kernel runs where eager's region turns the state on, not only
    inside jitamp's scopes."""
    check_against_eager(lower_no_scope, [_t(1), _t(2)], outer=region, grad=True)


def _plan_kinds(fn, *args) -> List[str]:
    scripted = script(fn)
    scripted(*args)
    graph = torch.jit.last_executed_optimized_graph()
    return [node.kind() if node.kind() != "jitamp::direct_call" else "direct " + node.s("op")
            for node in graph.findAllNodes("jitamp::direct_call") + graph.findAllNodes("aten::mm")
            + graph.findAllNodes("aten::cat")]


def test_the_plan_calls_them_directly():
    assert sorted(_plan_kinds(promote, _t(1), _t(2))) == ["direct aten::cat", "direct aten::mm"]
    # addmv has a plain kernel on CUDA only: the node says which kernel runs
    # at run time, where the op's own device is known
    scripted = script(cuda_policy_only)
    scripted(_t(1), _t(2))
    assert [n.s("op") for n in torch.jit.last_executed_optimized_graph().findAllNodes(
        "jitamp::direct_call")] == ["aten::addmv"]


def test_switched_off_the_plan_calls_the_op():
    previous = jitamp._C.set_direct_calls_enabled(False)
    try:
        assert sorted(_plan_kinds(promote, _t(1), _t(2))) == ["aten::cat", "aten::mm"]
    finally:
        jitamp._C.set_direct_calls_enabled(previous)
    assert jitamp._C.set_direct_calls_enabled(previous) == previous


def _mm_events(fn, *args) -> int:
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        fn(*args)
    return sum(1 for event in prof.events() if event.name == "aten::mm")


def test_one_dispatch_where_eager_has_two():
    """Eager's kernel calls the op again through the dispatcher, which the
    profiler records as a second aten::mm inside the first."""
    scripted = script(lower)
    args = (_t(1), _t(2))
    scripted(*args)
    assert _mm_events(lower, *args) == 4
    assert _mm_events(scripted, *args) == 2


def test_an_error_names_the_source_line():
    scripted = script(lower)
    with pytest.raises(RuntimeError) as raised:
        for _ in range(2):
            scripted(_t(1, 4, 3), _t(2))
    assert "return torch.mm(torch.mm(x, w), w)" in str(raised.value)


OVERRIDE = r'''
import sys, warnings
warnings.simplefilter("ignore")
import torch
import jitamp

# As Intel's extension does: an AutocastCPU kernel of another library's over
# eager's, with a policy of its own (here: float16 wherever eager's casts).
library = torch.library.Library("aten", "IMPL")
def mm(a, b):
    with torch._C._ExcludeDispatchKeyGuard(torch._C.DispatchKeySet(torch._C.DispatchKey.AutocastCPU)):
        return torch.mm(a.half(), b.half())
library.impl("mm", mm, "AutocastCPU")

def f(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return torch.mm(x, w)

with jitamp.enable():
    scripted = torch.jit.script(f)
x, w = torch.randn(4, 4), torch.randn(4, 4)
for _ in range(3):
    out = scripted(x, w)
# The plan's node is still a direct_call (CUDA's kernel is eager's); on CPU
# it leaves the op to the dispatcher, which runs the override. (Values are
# not compared: jitamp's smart casts, which follow eager's table, cast to
# bfloat16 before the override casts to float16.)
assert out.dtype == f(x, w).dtype == torch.float16, out.dtype
'''


def test_a_kernel_another_library_registers_is_called(tmp_path):
    """Only the wrapper autocast_mode.cpp registers is replaced: an op whose
    AutocastCPU kernel another library registered over it (Intel's
    extension does) stays an op the dispatcher calls. A process of its own:
    the override stays for the process."""
    import subprocess
    import sys
    program = tmp_path / "override.py"  # TorchScript reads the source
    program.write_text(OVERRIDE)
    result = subprocess.run([sys.executable, str(program)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]


def lower_cuda(x: torch.Tensor, w: torch.Tensor, c: torch.Tensor) -> List[torch.Tensor]:
    with torch.autocast("cuda", dtype=torch.float16):
        # mm: lower_precision_fp under CUDA autocast; cat: promote on CPU only
        # (the CPU tensor c's key is not the one that runs for CUDA tensors)
        y = torch.mm(torch.mm(x, w), w)
        return [y, torch.cat([y.float(), w], 0), torch.mm(c, c)]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device; none on this machine")
@pytest.mark.parametrize("outer", [None, torch.no_grad], ids=["grad", "no_grad"])
def test_cuda(outer):
    args = [_t(1).cuda(), _t(2).cuda(), _t(3)]
    scripted = check_against_eager(lower_cuda, args, outer=outer, grad=outer is None)
    assert len(torch.jit.last_executed_optimized_graph().findAllNodes("jitamp::direct_call")) == 4
    assert _mm_events(lower_cuda, *args) == 4 + 1  # the CPU mm has no kernel running
    assert _mm_events(scripted, *args) == 3
