"""enable()/disable()/rewrite(): hooks, idempotence, errors, and that the
JIT's own passes keep what jitamp inserted."""
import io
import types

import pytest
import torch

import jitamp
from oracle import check_against_eager, cpu_autocast, script, script_without_jitamp, torchscript_deprecation_ignored


def scoped_mm(x, y):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        z = torch.mm(x, y)
    return z


def plain_mm(x, y):
    return torch.mm(x, y)


class ScopedLinear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return self.linear(x) + 1 if x.numel() > 0 else x


def _script_without_jitamp(obj):
    assert not jitamp.is_enabled()
    return script_without_jitamp(obj)


def _kinds(graph):
    kinds = []

    def walk(block):
        for node in block.nodes():
            kinds.append(node.kind())
            for sub in node.blocks():
                walk(sub)

    walk(graph)
    return kinds


def test_enable_disable_restore_hooks_and_builtin_autocast():
    before_hooks = torch._C._jit_get_emit_hooks()
    before_builtin = torch._C._jit_set_autocast_mode(True)
    torch._C._jit_set_autocast_mode(before_builtin)
    with jitamp.enable():
        assert jitamp.is_enabled()
        assert torch._C._jit_get_emit_hooks() != before_hooks
        assert torch._C._jit_set_autocast_mode(False) is False, "built-in JIT autocast must be off"
        jitamp.enable()  # idempotent
    assert not jitamp.is_enabled()
    assert torch._C._jit_get_emit_hooks() == before_hooks
    assert torch._C._jit_set_autocast_mode(before_builtin) == before_builtin
    jitamp.disable()  # idempotent


def test_hooks_chain_to_hooks_already_installed():
    seen = []
    prev = torch._C._jit_get_emit_hooks()
    torch._C._jit_set_emit_hooks(lambda m: seen.append("module"), lambda f: seen.append("function"))
    try:
        with jitamp.enable():
            with torchscript_deprecation_ignored():
                fn = torch.jit.script(scoped_mm)
        assert "function" in seen
        assert "jitamp::autocast_enter" in _kinds(fn.graph)
    finally:
        torch._C._jit_set_emit_hooks(*prev)


def test_hooks_set_by_other_code_while_enabled_run_after_the_rewrite():
    """What PyTorch's JitTestCase does around every test: save the hooks, set
    its own, restore the saved ones. jitamp stays in the slot throughout."""
    seen = []
    before = torch._C._jit_get_emit_hooks()
    with jitamp.enable():
        saved = torch._C._jit_get_emit_hooks()
        torch._C._jit_set_emit_hooks(lambda m: seen.append("module"), lambda f: seen.append("function"))
        fn = _script_fresh_copy(scoped_mm)
        assert seen == ["function"]
        assert "jitamp::autocast_enter" in _kinds(fn.graph)
        check_against_eager(scoped_mm, [torch.randn(4, 4), torch.randn(4, 4)], scripted=fn)
        torch._C._jit_set_emit_hooks(*saved)
        fn = _script_fresh_copy(scoped_mm)
        assert seen == ["function"], "the restored hooks no longer run the other code's"
        assert "jitamp::autocast_enter" in _kinds(fn.graph)
        torch._C._jit_set_emit_hooks(lambda m: seen.append("module2"), None)
    # disable() leaves what the other code set last, as if jitamp had not been there
    try:
        assert torch._C._jit_get_emit_hooks()[1] is None
        assert torch._C._jit_get_emit_hooks()[0] is not None
    finally:
        torch._C._jit_set_emit_hooks(*before)


def test_hook_chain_survives_disable_emit_hooks():
    """PyTorch's save/load checks run in torch._jit_internal._disable_emit_hooks:
    save the hooks, set none, restore the saved.
    The restore brings back the chain that was installed, other code's hooks
    included, for every later script."""
    seen = []
    before = torch._C._jit_get_emit_hooks()
    try:
        with jitamp.enable():
            torch._C._jit_set_emit_hooks(lambda m: seen.append("module"), lambda f: seen.append("function"))
            with torch._jit_internal._disable_emit_hooks():
                fn = _script_fresh_copy(scoped_mm)
            assert seen == [] and "jitamp::autocast_enter" in _kinds(fn.graph)
            for _ in range(3):
                fn = _script_fresh_copy(scoped_mm)
                assert "jitamp::autocast_enter" in _kinds(fn.graph)
            assert seen == ["function"] * 3
    finally:
        torch._C._jit_set_emit_hooks(*before)


def test_hooks_kept_past_disable_no_longer_rewrite():
    """Hooks saved from torch._C._jit_get_emit_hooks while jitamp was
    enabled and set again after disable() run the other code's hooks of
    that moment, not jitamp's rewrite."""
    seen = []
    before = torch._C._jit_get_emit_hooks()
    try:
        with jitamp.enable():
            torch._C._jit_set_emit_hooks(lambda m: seen.append("module"), lambda f: seen.append("function"))
            saved = torch._C._jit_get_emit_hooks()
        torch._C._jit_set_emit_hooks(*saved)
        fn = _script_fresh_copy(scoped_mm)
        assert seen == ["function"]
        assert "jitamp::autocast_enter" not in _kinds(fn.graph) and "prim::Enter" in _kinds(fn.graph)
    finally:
        torch._C._jit_set_emit_hooks(*before)


def _script_fresh_copy(fn):
    """torch.jit.script of a fresh copy (TorchScript caches functions by
    identity), with whatever hooks are installed."""
    copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    with torchscript_deprecation_ignored():
        return torch.jit.script(copy)


def test_scripted_functions_and_modules_are_rewritten():
    fn = script(scoped_mm)
    assert "prim::Enter" not in _kinds(fn.graph)
    assert "jitamp::autocast_enter" in _kinds(fn.graph)
    module = script(ScopedLinear())
    assert "jitamp::autocast_enter" in _kinds(module.forward.graph)
    assert "jitamp::autocast_to_fp16" in _kinds(module.linear.forward.graph)


def test_rewrite_of_function_scripted_before_enable():
    fn = _script_without_jitamp(scoped_mm)
    assert jitamp.rewrite(fn) == [fn.qualified_name]
    x, y = torch.randn(4, 4), torch.randn(4, 4)
    check_against_eager(scoped_mm, (x, y), scripted=fn)
    check_against_eager(scoped_mm, (x, y), scripted=fn, outer=cpu_autocast(enabled=False))


def test_rewrite_is_idempotent():
    fn = script(scoped_mm)
    before = str(fn.graph)
    assert jitamp.rewrite(fn) == []
    assert jitamp.rewrite(fn) == []
    assert str(fn.graph) == before
    assert not jitamp.rewrite_graph(fn.graph)


def test_rewrite_after_run_is_a_clear_error():
    fn = _script_without_jitamp(scoped_mm)
    fn(torch.randn(2, 2), torch.randn(2, 2))
    with pytest.raises(RuntimeError, match="scoped_mm.*already run.*jitamp.enable\\(\\) before torch.jit.script"):
        jitamp.rewrite(fn)


def test_rewrite_after_run_is_fine_when_already_rewritten():
    # Already rewritten: rewrite() after a run is a no-op, not the
    # "already run" error, and the function still behaves as eager.
    fn = script(scoped_mm)
    x, y = torch.randn(2, 2), torch.randn(2, 2)
    fn(x, y)
    before = str(fn.graph)
    assert jitamp.rewrite(fn) == []
    assert str(fn.graph) == before
    check_against_eager(scoped_mm, (x, y), scripted=fn)


def test_rewrite_follows_callees():
    def outer(x, y):
        return plain_mm(x, y) + scoped_mm(x, y)

    fn = _script_without_jitamp(outer)
    jitamp.rewrite(fn)
    check_against_eager(outer, (torch.randn(3, 3), torch.randn(3, 3)), scripted=fn, outer=cpu_autocast())


class _Calls(torch.nn.Module):
    """A module scripted without jitamp that calls a scripted one."""

    def __init__(self, callee):
        super().__init__()
        self.callee = callee

    def forward(self, x):
        return self.callee(x) * 2


def test_code_scripted_without_jitamp_that_calls_rewritten_code():
    """Its executor (TorchScript's, with the built-in JIT autocast) inlines
    the callee's rewritten graph: its first call raises, naming the fix,
    instead of running off eager's. jitamp.rewrite() before that call
    configures it; after it, rewrite() raises too (the executor keeps its
    graph), and scripting it with jitamp enabled gives one that works."""
    model = ScopedLinear()
    x = torch.randn(2, 4)
    callee = script(model)
    # Before its first call: rewrite() configures it.
    caller = _script_without_jitamp(_Calls(callee))
    jitamp.rewrite(caller)
    check_against_eager(_Calls(model), (x,), scripted=caller, outer=cpu_autocast())
    check_against_eager(_Calls(model), (x,), scripted=caller, grad=True)

    # A fresh type each time: TorchScript reuses a class's compiled methods.
    class Calls(_Calls):
        pass

    caller = _script_without_jitamp(Calls(callee))
    with pytest.raises(RuntimeError, match="jitamp has not configured.*script it with jitamp enabled"):
        caller(x)
    with pytest.raises(RuntimeError, match="Calls.forward': it has already run without jitamp's configuration"):
        jitamp.rewrite(caller)
    check_against_eager(Calls(model), (x,), scripted=script(Calls(callee)), outer=cpu_autocast())


def test_rewrite_rejects_non_scripted_objects():
    with pytest.raises(TypeError, match="scripted function or module"):
        jitamp.rewrite(scoped_mm)


def test_module_scripted_before_enable_is_recompiled_after():
    model = ScopedLinear()
    _script_without_jitamp(model)
    scripted = script(model)  # same type: must still go through the hook
    assert "jitamp::autocast_enter" in _kinds(scripted.forward.graph)


def _save_and_load(scripted):
    buffer = io.BytesIO()
    with torchscript_deprecation_ignored():
        torch.jit.save(scripted, buffer)
        buffer.seek(0)
        return torch.jit.load(buffer)


def test_loaded_model_can_be_rewritten_before_it_runs():
    model = ScopedLinear().eval()
    loaded = _save_and_load(_script_without_jitamp(model))
    jitamp.rewrite(loaded)
    check_against_eager(model, (torch.randn(2, 4),), scripted=loaded)


def test_saved_rewritten_model_loads_and_matches():
    model = ScopedLinear().eval()
    loaded = _save_and_load(script(model))
    assert "jitamp::autocast_enter" in _kinds(loaded.forward.graph)
    jitamp.rewrite(loaded)  # nothing left to do
    check_against_eager(model, (torch.randn(2, 4),), scripted=loaded)


def test_dce_and_cse_keep_scope_ops_and_casts():
    fn = script(scoped_mm)
    graph = fn.graph.copy()
    casts = _kinds(graph).count("jitamp::autocast_to_fp16")
    torch._C._jit_pass_dce(graph)
    torch._C._jit_pass_cse(graph)
    torch._C._jit_pass_constant_propagation(graph)
    kinds = _kinds(graph)
    assert kinds.count("jitamp::autocast_enter") == 1
    assert kinds.count("jitamp::autocast_exit") == 1
    assert kinds.count("jitamp::autocast_to_fp16") == casts


def same_cast_in_and_out(x):
    a = torch.mm(x, x)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        b = torch.mm(x, x)
    return a, b


def test_cse_merges_casts_within_a_region_only():
    fn = script(same_cast_in_and_out)
    graph = fn.graph.copy()
    assert _kinds(graph).count("jitamp::autocast_to_fp16") == 4  # x twice, per mm
    torch._C._jit_pass_cse(graph)
    casts = [n for n in graph.nodes() if n.kind() == "jitamp::autocast_to_fp16"]
    # One cast of x outside the scope and one inside: never one for both.
    assert len(casts) == 2
    regions = {list(n.inputs())[-1].unique() for n in casts}
    assert len(regions) == 2
    check_against_eager(same_cast_in_and_out, (torch.randn(3, 3),), scripted=fn)


class PlainLinear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.linear(x)


def test_freezing_does_not_fold_casts_of_constant_weights():
    # torch.jit.freeze turns weights into constants and propagates them; a
    # cast folded then (autocast off) would be wrong for calls under autocast.
    model = PlainLinear().eval()
    with torchscript_deprecation_ignored():
        frozen = torch.jit.freeze(script(model))
    graph = frozen.forward.graph
    weight_casts = [
        n for n in graph.nodes()
        if n.kind() == "jitamp::autocast_to_fp16" and n.inputsAt(0).node().kind() == "prim::Constant"
    ]
    assert len(weight_casts) == 2, graph  # weight and bias
    check_against_eager(model, (torch.randn(2, 4),), scripted=frozen, outer=cpu_autocast())
    check_against_eager(model, (torch.randn(2, 4),), scripted=frozen)


def test_builtin_autocast_never_touches_a_rewritten_function():
    # Scripted with jitamp, called after disable() (built-in pass back on)
    # under an eager autocast: the scope's enabled=False must still hold.
    fn = script(disabled_scope)
    assert not jitamp.is_enabled()
    check_against_eager(disabled_scope, (torch.randn(3, 3),), scripted=fn, outer=cpu_autocast())


def disabled_scope(x):
    with torch.autocast("cpu", enabled=False):
        y = torch.mm(x, x)
    return y


def test_rewrite_of_a_graph_with_inlined_rewritten_callees_stays_well_formed():
    # A caller scripted without jitamp, its callee with; the caller's graph
    # inlined (callee's region token inside the caller's scope), then
    # rewritten: casts outside the scope must not use the callee's token.
    helper = script(plain_mm)

    def caller(x, y):
        z = torch.mm(x, y)
        with torch.autocast("cpu"):
            w = helper(z, y)
        return w

    fn = _script_without_jitamp(caller)
    torch._C._jit_pass_inline(fn.graph)
    jitamp.rewrite(fn)
    fn.graph.lint()
    regions = [n for n in fn.graph.nodes() if n.kind() == "jitamp::autocast_caller_region"]
    assert len(regions) == 2  # the callee's (inlined) and the caller's own


class ResidualLinear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = x + torch.nn.functional.gelu(self.linear(x))
        return y


def test_mixed_precision_training_matches_eager_on_every_call():
    # bf16 linear output added to an fp32 input: TorchScript's symbolic
    # autodiff (profiling executor, from call 2) would feed the fp32
    # gradient of the add into linear's bf16 backward and fail; rewritten
    # functions run on the simple executor, i.e. eager's autograd.
    model = ResidualLinear()
    check_against_eager(model, (torch.randn(4, 8),), scripted=script(model), grad=True)
