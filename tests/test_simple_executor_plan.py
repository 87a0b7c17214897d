"""jitamp's simple executor runs its plan less the smart casts that the op's
own autocast kernel makes anyway (csrc/jit_autocast/pipeline/pipeline.h,
SimpleExecutorPlan): jitamp's scope ops set eager's autocast state, so each
op casts its own arguments, as in eager. Dropped: every cast in a loop, and
the casts of ops that read no argument or attribute; an op's casts go or
stay together. The rewritten graph, and the plan callers inline, keep them."""
from typing import List

import pytest
import torch
from torch import nn

from oracle import check_against_eager, script


def weight_in_a_loop(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        for _ in range(4):
            x = torch.mm(x, w)
        return x


def weight_in_a_loop_uncached(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16, cache_enabled=False):
        for _ in range(4):
            x = torch.mm(x, w)
        return x


def activations_only(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        q = torch.mm(x, w)
        return torch.mm(q, q.t()).softmax(-1) @ q


def alias_of_an_argument(x: torch.Tensor) -> List[torch.Tensor]:
    # v is x itself (a leaf): kl_div's two fp32 casts are both x's, and the
    # order they are made in decides the order backward sums x's gradients in
    # (fuzz batch 20261123, program 119, under an outer float16 autocast).
    v = x.to(x.dtype)
    return [v, torch.nn.functional.kl_div(x, v, reduction="none"), x * 2]


class LoopOverWeight(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 4) / 2)

    def forward(self, x: torch.Tensor, n: int) -> torch.Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            for _ in range(n):
                x = torch.mm(x, self.w).relu() + torch.mm(x, self.w)
            return x


def _t(seed: int, dtype=torch.float32) -> torch.Tensor:
    return torch.randn(4, 4, generator=torch.Generator().manual_seed(seed)).to(dtype)


@pytest.mark.parametrize("fn", [weight_in_a_loop, weight_in_a_loop_uncached, activations_only])
@pytest.mark.parametrize("outer", [None, torch.no_grad], ids=["grad", "no_grad"])
def test_against_eager(fn, outer):
    check_against_eager(fn, [_t(1), _t(2)], outer=outer, grad=outer is None)


def test_an_ops_casts_go_together():
    check_against_eager(alias_of_an_argument, [_t(3, torch.bfloat16)],
                        outer=lambda: torch.autocast("cpu", dtype=torch.float16), grad=True)


@pytest.mark.parametrize("outer", [None, torch.no_grad], ids=["grad", "no_grad"])
def test_module_weight_in_a_loop(outer):
    torch.manual_seed(0)
    eager = LoopOverWeight()
    scripted = script(LoopOverWeight())
    scripted.load_state_dict(eager.state_dict())
    check_against_eager(eager, [_t(4), 3], scripted=scripted, outer=outer, grad=outer is None)


def _casts(graph) -> int:
    """The smart casts a graph makes: its cast nodes, and in a plan, those
    a direct call makes first (cast_args: the casts right before it that
    only it read)."""
    nodes = sum(len(graph.findAllNodes(kind, recurse=True)) for kind in
                ("jitamp::autocast_to_fp16", "jitamp::autocast_to_fp32", "jitamp::autocast_promote"))
    return nodes + sum(len(getattr(call, "is")("cast_args")) for call in graph.findAllNodes("jitamp::direct_call", recurse=True)
                       if call.hasAttribute("cast_args"))


def test_what_the_executor_runs():
    scripted = script(weight_in_a_loop)
    assert _casts(scripted.graph) == 2
    scripted(_t(1), _t(2))
    assert _casts(torch.jit.last_executed_optimized_graph()) == 0
    scripted = script(activations_only)
    assert _casts(scripted.graph) == 7  # softmax's is CUDA's only
    scripted(_t(1), _t(2))
    assert _casts(torch.jit.last_executed_optimized_graph()) == 2  # mm(x, w)'s


def callee(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    for _ in range(2):
        x = torch.mm(x, y)
    return x


def caller(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return callee(x.relu(), y.relu())


def test_callers_inline_every_cast():
    """A caller run by the profiling executor inlines a callee run by the
    simple executor with its casts (its symbolic autodiff and fusers read
    them): the plan callers inline is not the simple executor's."""
    simple_callee = script(callee)
    simple_callee(_t(1), _t(2))
    assert _casts(simple_callee.graph) == 2
    assert _casts(torch.jit.last_executed_optimized_graph()) == 0
    profiled = script(caller, profiling_executor=True)
    with torch.no_grad():
        for _ in range(3):
            out = profiled(_t(1), _t(2))
    assert _casts(torch.jit.last_executed_optimized_graph()) > 0
    with torch.no_grad():
        assert torch.equal(out, caller(_t(1), _t(2)))


def single_mm(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.mm(x, y)


@pytest.mark.parametrize("fn", [callee, single_mm])
def test_the_plan_has_no_caller_region_op(fn):
    """Outside its scopes a function's casts take its caller's region token,
    which keeps the casts of different regions apart through the passes; in
    the simple executor's plan, after the last pass, it is the constant 0
    (callee: read by the weight's cast made before the loop) or gone
    (single_mm: its casts went into the direct call), and the function
    still casts as eager does in its caller's eager region."""
    scripted = script(fn)
    assert scripted.graph.findAllNodes("jitamp::autocast_caller_region")
    check_against_eager(fn, [_t(1), _t(2)], scripted=scripted,
                        outer=lambda: torch.autocast("cpu", dtype=torch.bfloat16), grad=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        scripted(_t(1), _t(2))
    plan = torch.jit.last_executed_optimized_graph()
    assert _casts(plan) > 0 or plan.findAllNodes("jitamp::autocast_to_fp16_before_loop")
    assert not plan.findAllNodes("jitamp::autocast_caller_region_in_plan", recurse=True)


# A loop's low-precision cast of a value defined before the loop is made
# once, before it (jitamp::autocast_to_fp16_before_loop): what the first
# iteration's cast would give, or the value itself where the iterations'
# casts must stay apart (grad mode on and the value requires grad; the
# loop does not run).

def _before_loop(graph) -> int:
    """The casts made before a loop, by source line: the plan unrolls loops,
    which copies an inner loop's cast with the outer body."""
    return len({node.sourceRange() for node in graph.findAllNodes("jitamp::autocast_to_fp16_before_loop",
                                                                     recurse=True)})


def loop_over_argument(x: torch.Tensor, w: torch.Tensor, n: int) -> torch.Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        for _ in range(n):
            x = torch.mm(x, w) + torch.mm(w, x)
        return x


def loop_over_derived(x: torch.Tensor, w: torch.Tensor, n: int) -> torch.Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        v = w * 2  # requires grad, not a leaf: eager casts it at every use
        d = w.detach()  # no autograd: one cast serves every iteration
        for _ in range(n):
            x = torch.mm(x, v) + torch.mm(x, d)
        return x


def loop_over_argument_uncached(x: torch.Tensor, w: torch.Tensor, n: int) -> torch.Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16, cache_enabled=False):
        for _ in range(n):
            x = torch.mm(x, w)
        return x


def nested_loops(x: torch.Tensor, w: torch.Tensor, n: int) -> torch.Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        for _ in range(n):
            x = torch.mm(x, w)
            for _ in range(n - 1):
                x = torch.mm(w, x)
        return x


def while_loop(x: torch.Tensor, w: torch.Tensor, n: int) -> torch.Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        while n > 0:
            x = torch.mm(x, w)
            n -= 1
        return x


def scope_in_the_loop(x: torch.Tensor, w: torch.Tensor, n: int) -> torch.Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        for _ in range(n):
            x = torch.mm(x, w)
            with torch.autocast("cpu", enabled=False):
                x = torch.mm(x.float(), w)
        return x


def grad_mode_in_the_loop(x: torch.Tensor, w: torch.Tensor, n: int) -> torch.Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        for _ in range(n):
            x = torch.mm(x, w)
            with torch.no_grad():
                y = torch.mm(x, w)
            x = x + y
        return x


def grad_on_in_the_loop(x: torch.Tensor, w: torch.Tensor, n: int) -> torch.Tensor:
    # called with grad mode off
    with torch.autocast("cpu", dtype=torch.bfloat16):
        for _ in range(n):
            torch.set_grad_enabled(True)
            x = torch.mm(x, w)
            torch.set_grad_enabled(False)
        return x


def test_grad_turned_on_in_a_no_grad_loop():
    # hoisted, w's cast would be made with grad mode off: no gradient to w
    scripted = script(grad_on_in_the_loop)
    w = _t(2).requires_grad_()
    with torch.no_grad():
        expected = grad_on_in_the_loop(_t(1), w, 2)
        for _ in range(3):
            got = scripted(_t(1), w, 2)
    assert _before_loop(torch.jit.last_executed_optimized_graph()) == 0
    assert expected.requires_grad and got.requires_grad
    expected.sum().backward()
    expected_grad, w.grad = w.grad, None
    got.sum().backward()
    assert torch.equal(w.grad, expected_grad)


def cast_in_a_branch(x: torch.Tensor, w: torch.Tensor, n: int) -> torch.Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        for i in range(n):
            if i % 2 == 1:
                x = torch.mm(x, w)
        return x


class LoopMutatingABuffer(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("w", torch.randn(4, 4) / 2)

    def forward(self, x: torch.Tensor, n: int) -> torch.Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            for _ in range(n):
                x = torch.mm(x, self.w)
                self.w.mul_(1.5)  # each iteration's cast sees the new values
            return x


class LoopSettingAnAttribute(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.randn(4, 4) / 2

    def forward(self, x: torch.Tensor, n: int) -> torch.Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            for _ in range(n):
                x = torch.mm(x, self.w)
                self.w = self.w * 1.5
            return x


LOOPS = [loop_over_argument, loop_over_derived, loop_over_argument_uncached, nested_loops, while_loop,
         scope_in_the_loop, grad_mode_in_the_loop, cast_in_a_branch]


@pytest.mark.parametrize("fn", LOOPS, ids=[f.__name__ for f in LOOPS])
@pytest.mark.parametrize("n", [0, 1, 3, 8, 17])  # the plan's loop of 8 runs 0, 1 or 2 times
@pytest.mark.parametrize("outer", [None, torch.no_grad], ids=["grad", "no_grad"])
def test_loop_casts_made_before_the_loop_against_eager(fn, n, outer):
    check_against_eager(fn, [_t(1), _t(2), n], outer=outer, grad=outer is None)


@pytest.mark.parametrize("cls", [LoopOverWeight, LoopMutatingABuffer, LoopSettingAnAttribute])
@pytest.mark.parametrize("n", [0, 3])
@pytest.mark.parametrize("outer", [None, torch.no_grad], ids=["grad", "no_grad"])
def test_module_loops_against_eager(cls, n, outer):
    torch.manual_seed(0)
    eager, scripted = cls(), cls()
    scripted.load_state_dict(eager.state_dict())
    if cls is LoopSettingAnAttribute:
        scripted.w = eager.w.clone()
    check_against_eager(eager, [_t(4), n], scripted=script(scripted), outer=outer, grad=outer is None)


def _carried_bools(graph) -> int:
    return sum(1 for loop in graph.findAllNodes("prim::Loop", recurse=True)
               for value in loop.outputs() if value.type().kind() == "BoolType")


def _mms(graph_or_node) -> list:
    """The plan's mm nodes (each a jitamp::direct_call, ops/direct_call.h)."""
    return [node for node in graph_or_node.findAllNodes("jitamp::direct_call") if node.s("op") == "aten::mm"]


def test_the_plan_unrolls_loops():
    """As TorchScript's optimized plans do: a constant trip count under 64
    whole; else a loop of 8 copies of the body, then a loop for the rest,
    which reads what the loop of 8 reads: the loop of 8 is kept out of
    line by jitamp::keep_out_of_line() after it (repairs/keep_loops_out_of_line.h),
    and no loop carries KeepLoopsOutOfLine's bools, which the graph callers
    inline keeps."""
    scripted = script(weight_in_a_loop)
    scripted(_t(1), _t(2))
    plan = torch.jit.last_executed_optimized_graph()
    assert not plan.findAllNodes("prim::Loop", recurse=True) and len(_mms(plan)) == 4, plan

    scripted = script(loop_over_argument)
    scripted(_t(1), _t(2), 20)
    plan = torch.jit.last_executed_optimized_graph()
    loops = plan.findAllNodes("prim::Loop")
    kinds = [node.kind() for node in plan.nodes()]
    assert len(loops) == 2 and kinds[kinds.index("prim::Loop") + 1] == "jitamp::keep_out_of_line", plan
    assert len(_mms(loops[0])) == 8 * len(_mms(loops[1])), plan
    assert _carried_bools(plan) == 0, plan
    assert _carried_bools(scripted.graph) == 2, scripted.graph  # what the function graph keeps
    check_against_eager(loop_over_argument, [_t(1), _t(2), 20], scripted=scripted)


@pytest.mark.parametrize("fn, before_loop", [
    (loop_over_argument, 1),  # one for both uses of w
    (loop_over_derived, 2),
    (nested_loops, 2),  # w's before each loop: the inner one may not run
    (while_loop, 1),
    (scope_in_the_loop, 0),  # the scope changes the state within the loop
    (grad_mode_in_the_loop, 0),  # so does no_grad
    (cast_in_a_branch, 0),  # the first iteration may not reach it
])
def test_which_casts_are_made_before_the_loop(fn, before_loop):
    scripted = script(fn)
    scripted(_t(1), _t(2), 2)
    assert _before_loop(scripted.graph) == 0  # the plan's only
    assert _before_loop(torch.jit.last_executed_optimized_graph()) == before_loop


@pytest.mark.parametrize("cls, before_loop", [
    (LoopOverWeight, 1), (LoopMutatingABuffer, 0), (LoopSettingAnAttribute, 0)])
def test_which_weight_casts_are_made_before_the_loop(cls, before_loop):
    scripted = script(cls())
    scripted(_t(4), 2)
    assert _before_loop(torch.jit.last_executed_optimized_graph()) == before_loop


def _copies(fn, *args) -> int:
    fn(*args)
    with torch.profiler.profile() as prof:
        fn(*args)
    return sum(e.name == "aten::_to_copy" for e in prof.events())


@pytest.mark.parametrize("n", [0, 1, 5])
def test_a_no_grad_loop_copies_what_eager_copies(n):
    # w once for every iteration and both uses (eager: once, then its cache);
    # none where the loop does not run
    torch.manual_seed(0)
    eager = LoopOverWeight().eval()
    scripted = script(LoopOverWeight().eval())
    scripted.load_state_dict(eager.state_dict())
    with torch.no_grad():
        assert _copies(scripted, _t(4), n) == _copies(eager, _t(4), n) == (0 if n == 0 else 3)
