"""`return` / `break` / `continue` inside an autocast scope.

TorchScript's front end compiles early returns in a `with` block that ends
the function (and so in a function decorated with @torch.autocast, whose
body is one such block), and fails with an internal assert on a block that
an exit leaves with code after it, or that follows an early exit. With
jitamp enabled, the autocast blocks of a function with an early exit reach
the front end as jitamp's scope ops (jitamp/_early_exits.py), so every such
exit scripts and runs as eager does; another context manager's block there
is an error that says what and where.
"""
import inspect
from typing import List, Tuple

import pytest
import torch
from torch import Tensor

import jitamp
import oracle
from oracle import check_against_eager, cpu_autocast
from scenario_helpers import OUTERS, WARNING_FILTERS, X, odd

pytestmark = WARNING_FILTERS


def returns_early_in_final_scope(x: Tensor, flag: bool):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        if flag:
            return torch.mm(x, x)
        y = torch.mm(x, x.t())
        return y * 2


@torch.autocast("cpu", dtype=torch.bfloat16)
def decorated_returns_early(x: Tensor, flag: bool):
    if flag:
        return torch.mm(x, x)
    return torch.softmax(x, dim=-1)


@pytest.mark.parametrize("outer", ["no_outer", "outer_fp16"])
@pytest.mark.parametrize("fn", [returns_early_in_final_scope, decorated_returns_early],
                         ids=["final_scope", "decorated"])
def test_early_return_that_torchscript_compiles(fn, outer):
    check_against_eager(fn, [X, True], outer=OUTERS[outer], args_for_call=lambda i: [X, odd(i)])




def returns_early_then_more(x: Tensor, flag: bool):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        if flag:
            return torch.mm(x, x)
        y = torch.mm(x, x.t())
    return y.float() + torch.mm(x, x)


def breaks_in_scope(x: Tensor, flag: bool):
    for i in range(3):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            if i == 1 and flag:
                break
            x = torch.mm(x, x).float()
    return torch.mm(x, x)


def continues_in_scope(x: Tensor, flag: bool):
    total = torch.zeros(4, 4)
    for i in range(4):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = torch.mm(x, x)
            if i % 2 == 1 and flag:
                continue
            total = total + torch.mm(y, x).float()
        total = total + torch.mm(total, x)
    return total


def returns_from_loop_in_scope(x: Tensor, n: int):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        for i in range(4):
            x = torch.mm(x, x)
            if i == n:
                return x
        x = torch.softmax(x, dim=-1)
    return torch.mm(x, x)


def returns_through_nested_scopes(x: Tensor, n: int):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        for i in range(3):
            with torch.autocast("cpu", enabled=False):
                x = torch.mm(x, x)
                if i == n:
                    return x, torch.mm(x, x)
                if i == 1:
                    continue
            x = torch.mm(x, x)
    return x, torch.mm(x, x)


def returns_from_two_items(x: Tensor, flag: bool):
    with torch.autocast("cpu", dtype=torch.bfloat16), torch.autocast("cpu", enabled=False):
        y = torch.mm(x, x)
        if flag:
            return y
    return torch.mm(y, x)


def returns_early_as_named(x: Tensor, flag: bool):
    with torch.cpu.amp.autocast() as ac:
        y = torch.mm(x, x)
        if flag:
            return torch.mm(y, y)
    with ac:
        y = torch.mm(y.float(), x)
    return torch.mm(y.float(), x)


def raises_after_an_early_return(x: Tensor, n: int):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        if n == 0:
            return torch.mm(x, x)
        if n == 2:
            raise ValueError("two is refused inside the scope")
        y = torch.mm(x, x)
    return torch.mm(y.float(), x)


def returns_nothing_early(x: Tensor, out: Tensor, flag: bool):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out.add_(torch.mm(x, x))
        if flag:
            return
        out.mul_(torch.mm(out, x))
    out.add_(torch.mm(out, x))


def returns_early_before_a_scope(x: Tensor, flag: bool):
    if flag:
        return x * 2
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = torch.mm(x, x)
    return torch.mm(y.float(), x)


def breaks_before_a_scope(x: Tensor, flag: bool):
    for i in range(3):
        if flag and i == 2:
            break
        with torch.autocast("cpu", dtype=torch.bfloat16):
            x = torch.mm(x, x).float()
    return x


def returns_from_a_bound_autocast(x: Tensor, flag: bool):
    ac = torch.autocast("cpu", dtype=torch.bfloat16)
    with ac:
        if flag:
            return torch.mm(x, x)
        y = torch.mm(x, x.t())
    with ac:
        y = torch.mm(y.float(), x)
    return y


def returns_from_a_rebound_autocast(x: Tensor, flag: bool):
    ac = torch.autocast("cpu", dtype=torch.bfloat16)
    if not flag:
        ac = torch.autocast("cpu", enabled=False)
    with ac:
        if flag:
            return torch.mm(x, x)
        y = torch.mm(x, x.t())
    return y


EARLY_EXITS = {
    "rebound_autocast": (returns_from_a_rebound_autocast, lambda i: [X, odd(i)]),
    "bound_autocast": (returns_from_a_bound_autocast, lambda i: [X, odd(i)]),
    "return_before_scope": (returns_early_before_a_scope, lambda i: [X, odd(i)]),
    "break_before_scope": (breaks_before_a_scope, lambda i: [X, odd(i)]),
    "return_then_more": (returns_early_then_more, lambda i: [X, odd(i)]),
    "break": (breaks_in_scope, lambda i: [X, odd(i)]),
    "continue": (continues_in_scope, lambda i: [X, odd(i)]),
    "return_from_loop": (returns_from_loop_in_scope, lambda i: [X, i % 5]),
    "return_through_nested": (returns_through_nested_scopes, lambda i: [X, i % 4]),
    "two_items": (returns_from_two_items, lambda i: [X, odd(i)]),
    "as_named": (returns_early_as_named, lambda i: [X, odd(i)]),
    "raise": (raises_after_an_early_return, lambda i: [X, i % 3]),
}


def _as_named_binds_none() -> bool:
    from jitamp._library import EAGER_ENTER_RETURNS_NONE
    return EAGER_ENTER_RETURNS_NONE


@pytest.mark.parametrize("outer", ["no_outer", "outer_fp16", "outer_disabled"])
@pytest.mark.parametrize("case", list(EARLY_EXITS))
def test_early_exit_from_a_scope_runs_as_eager(case, outer):
    fn, args_for_call = EARLY_EXITS[case]
    if case == "as_named" and _as_named_binds_none():
        pytest.skip("torch < 2.5: eager binds `as ac` to None, so `with ac:` fails in eager "
                    "(test_early_exit_with_an_as_name_before_torch_2_5 covers it)")
    outers = {"no_outer": None, "outer_fp16": cpu_autocast(torch.float16),
              "outer_disabled": cpu_autocast(torch.bfloat16, enabled=False)}
    # With gradients under outer_fp16, eager's cast cache hands the scopes
    # the region's casts of leaves (docs/runtime-model.md, "The cast cache").
    check_against_eager(fn, args_for_call(1), outer=outers[outer], args_for_call=args_for_call, grad=True)


def test_early_return_of_nothing_runs_as_eager():
    scripted = oracle.script(returns_nothing_early)
    before = oracle.autocast_state()
    for call in range(1, 5):
        eager_out, scripted_out = torch.zeros(4, 4), torch.zeros(4, 4)
        assert returns_nothing_early(X, eager_out, odd(call)) is None
        assert scripted(X, scripted_out, odd(call)) is None
        oracle.assert_same(eager_out, scripted_out, what=f"call {call}: out")
        assert oracle.autocast_state() == before


class EarlyReturnModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)

    def forward(self, x: Tensor, flag: bool) -> Tuple[Tensor, Tensor]:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = self.linear(x)
            if flag:
                return y, torch.softmax(y, dim=-1)
            z = self.linear(y.float())
        return z, self.linear(z.float())


def test_early_return_in_a_module_method_runs_as_eager():
    torch.manual_seed(0)
    module = EarlyReturnModule()
    check_against_eager(module, [X, True], args_for_call=lambda i: [X, odd(i)], grad=True)


def test_casts_after_an_early_exit_are_outside_the_scope():
    """After TorchScript's exit transform the code after the block sits in
    the other branch of the early return's `if`; its casts must be tied to
    the caller's region, not the scope's (else common-subexpression
    elimination could share a cast across the scope's exit)."""
    graph = oracle.script(returns_early_then_more).graph
    exits = [n for n in graph.findAllNodes("jitamp::autocast_exit")]
    assert len(exits) == 2
    (enter,) = graph.findAllNodes("jitamp::autocast_enter")
    region = enter.outputsAt(1)
    after = list(exits[1].owningBlock().nodes())
    after = after[after.index(exits[1]) + 1:]
    casts = [n for n in after if n.kind() == "jitamp::autocast_to_fp16"]
    assert len(casts) == 2
    assert all(region not in list(n.inputs()) for n in casts)


def returns_from_no_grad(x: Tensor, flag: bool):
    with torch.no_grad():
        if flag:
            return torch.mm(x, x)
        y = torch.mm(x, x.t())
    return y


def returns_from_a_chosen_autocast(x: Tensor, flag: bool):
    ac = torch.autocast("cpu", dtype=torch.bfloat16) if flag else torch.autocast("cpu", enabled=False)
    with ac:
        if flag:
            return torch.mm(x, x)
        y = torch.mm(x, x.t())
    return y


def returns_before_no_grad(x: Tensor, flag: bool):
    if flag:
        return torch.mm(x, x)
    with torch.no_grad():
        y = torch.mm(x, x.t())
    return y


@pytest.mark.parametrize("fn, with_offset", [
    (returns_from_no_grad, -2), (returns_from_a_chosen_autocast, -2), (returns_before_no_grad, 1)],
    ids=["no_grad", "chosen_autocast", "no_grad_after"])
def test_early_exit_jitamp_does_not_lower_is_a_clear_error(fn, with_offset):
    fn(X, True)  # eager runs it
    lines, start = inspect.getsourcelines(fn)
    line = start + next(i for i, text in enumerate(lines) if text.strip() == "return torch.mm(x, x)")
    with pytest.raises(RuntimeError, match=rf"left early by a `return`, `break` or `continue`, or after one "
                                           rf"\(`return` at .*test_early_exit.py:{line}, in {fn.__name__}; "
                                           rf"the `with` block at line {line + with_offset}\)"):
        oracle.script(fn)


def returns_early_as_named_only(x: Tensor, flag: bool):
    with torch.autocast("cpu", dtype=torch.bfloat16) as ac:
        if flag:
            return torch.mm(x, x)
        y = torch.mm(x, x.t())
    return y


def test_early_exit_with_an_as_name_before_torch_2_5():
    """Before torch 2.5 eager binds `as ac` to None; such a block is not
    lowered (its uses of `ac` follow eager through the pass's own lowering,
    which TorchScript's front end never reaches here): a clear error. From
    2.5 on it runs as eager does."""
    if not _as_named_binds_none():
        check_against_eager(returns_early_as_named_only, [X, True], args_for_call=lambda i: [X, odd(i)])
        return
    with pytest.raises(RuntimeError, match=r"left early by a `return`, `break` or `continue`, or after one "
                                           r"\(`return` at "):
        oracle.script(returns_early_as_named_only)


def test_scope_ops_name_is_bound_only_while_enabled():
    import builtins

    from jitamp import _early_exits
    names = _early_exits.SCOPE_OPS
    assert not any(hasattr(builtins, name) for name in names.values())
    with jitamp.enable():
        for op, name in names.items():
            assert getattr(builtins, name) is getattr(torch.ops.jitamp, op)
    assert not any(hasattr(builtins, name) for name in names.values())


def test_early_return_module_saved_and_loaded(tmp_path):
    torch.manual_seed(0)
    module = EarlyReturnModule()
    path = str(tmp_path / "early_return.pt")
    with oracle.torchscript_deprecation_ignored():
        torch.jit.save(oracle.script(module), path)
        loaded = torch.jit.load(path)
    check_against_eager(module, [X, True], scripted=loaded, args_for_call=lambda i: [X, odd(i)], grad=True)
