"""The oracle itself: every difference it promises to report must fail it.

Each test hands `check_against_eager` a "scripted" side that differs from
eager in one way (a plain Python callable where that is the simplest way to
differ, real TorchScript where the oracle parses what TorchScript raises)
and expects the oracle's AssertionError; a matching pair must pass.
"""
import io

import pytest
import torch
from torch import Tensor

import oracle
from oracle import assert_same_error, check_against_eager, cpu_autocast, unwrap_torchscript_error

X = torch.randn(4, 4, generator=torch.Generator().manual_seed(0))


@pytest.fixture(autouse=True)
def _isolate_autocast_state():
    oracle.reset_autocast_state()
    yield
    oracle.reset_autocast_state()


def scoped_mm(x: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        z = torch.mm(x, x)
    return z


def _fails(match, fn, args, **kwargs):
    with pytest.raises(AssertionError, match=match):
        check_against_eager(fn, args, **kwargs)


def test_a_matching_pair_passes():
    check_against_eager(scoped_mm, [X], grad=True, outer=cpu_autocast(torch.float16))


# --- outputs ---------------------------------------------------------------

def test_wrong_dtype_fails():
    _fails("dtype torch.bfloat16 eager, torch.float32 scripted",
           scoped_mm, [X], scripted=lambda x: scoped_mm(x).float())


def test_wrong_value_fails():
    _fails("values differ", scoped_mm, [X], scripted=lambda x: scoped_mm(x) * 2)


def test_complex_half_values_are_compared():
    """complex32 has no comparison kernels (torch.equal raises): compared
    as (real, imaginary) pairs (fuzz seed 112903, indices 8819, 43551)."""
    x = torch.randn(2, 2, dtype=torch.complex64).to(torch.complex32)
    y = x.clone()
    oracle.assert_same([x], [y])
    y[0, 0] = 0
    with pytest.raises(AssertionError, match="values differ"):
        oracle.assert_same([x], [y])


def test_wrong_value_fails_with_a_tolerance_too():
    _fails("output", scoped_mm, [X], scripted=lambda x: scoped_mm(x) * 2, exact=False)


def test_wrong_structure_fails():
    _fails("1 values eager, 2 scripted", scoped_mm, [X], scripted=lambda x: (scoped_mm(x), x))


def test_wrong_non_tensor_output_fails():
    def flag(x):
        return torch.is_autocast_enabled("cpu")
    _fails("False eager, True scripted", flag, [X], scripted=lambda x: True)


def test_a_difference_on_call_10_only_fails():
    calls = []

    def wrong_on_call_10(x):
        calls.append(1)
        return scoped_mm(x).float() if len(calls) == 10 else scoped_mm(x)
    _fails("call 10 output", scoped_mm, [X], scripted=wrong_on_call_10)


# --- gradients -------------------------------------------------------------

def test_wrong_grad_fails():
    def doubled_grad(x):
        # the same value (2x - x is exact in float32), twice the gradient
        return scoped_mm(2 * x - x.detach())
    check_against_eager(scoped_mm, [X], scripted=doubled_grad)  # the outputs agree
    _fails(r"call 1 grad\[0\]\[0\]: values differ", scoped_mm, [X], scripted=doubled_grad, grad=True)


def test_missing_grad_fails():
    _fails("1 gradients eager, 0 scripted", scoped_mm, [X], scripted=lambda x: scoped_mm(x).detach(), grad=True)


# --- autocast state --------------------------------------------------------

def test_state_left_changed_after_the_call_fails():
    def leaks(x):
        torch.set_autocast_enabled("cpu", True)
        return scoped_mm(x)
    _fails("autocast state after the scripted call", scoped_mm, [X], scripted=leaks)


def test_state_changed_inside_the_callers_region_fails():
    # The eager region's __exit__ restores the state; the difference at the
    # end of the call, inside the region, must still be reported.
    def changes_dtype(x):
        torch.set_autocast_dtype("cpu", torch.float16)
        return scoped_mm(x)
    _fails("autocast state at the end of the call", scoped_mm, [X], scripted=changes_dtype,
           outer=cpu_autocast(torch.bfloat16))


def test_nesting_left_changed_fails():
    def enters(x):
        torch.autocast_increment_nesting()
        return scoped_mm(x)
    _fails("autocast state after the scripted call", scoped_mm, [X], scripted=enters)


# --- errors ----------------------------------------------------------------

def raises_value_error(x: Tensor, flag: bool):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        if flag:
            raise ValueError("bad input")
        z = torch.mm(x, x)
    return z


def raises_runtime_error(x: Tensor, flag: bool):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        if flag:
            raise RuntimeError("bad input")
        z = torch.mm(x, x)
    return z


def raises_other_message(x: Tensor, flag: bool):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        if flag:
            raise ValueError("bad input, and more")
        z = torch.mm(x, x)
    return z


def raises_empty(x: Tensor, flag: bool):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        if flag:
            raise ValueError()
        z = torch.mm(x, x)
    return z


def mm_shapes(x: Tensor, y: Tensor):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        z = torch.mm(x, y)
    return z


def _fork_target(x: Tensor, flag: bool) -> Tensor:
    if flag:
        raise ValueError("bad fork")
    return torch.mm(x, x)


def fork_raises(x: Tensor, flag: bool):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        z = torch.jit.wait(torch.jit.fork(_fork_target, x, flag))
    return z


BAD = torch.randn(3, 5)


@pytest.mark.parametrize("fn, args", [
    pytest.param(raises_value_error, [X, True], id="raise_statement"),
    pytest.param(mm_shapes, [X, BAD], id="op_error"),
    pytest.param(fork_raises, [X, True], id="raise_in_forked_task"),
])
def test_the_same_error_passes(fn, args):
    check_against_eager(fn, args)


def test_the_same_error_from_a_loaded_model_passes():
    buffer = io.BytesIO()
    with oracle.torchscript_deprecation_ignored():
        torch.jit.save(oracle.script(raises_value_error), buffer)
        buffer.seek(0)
        loaded = torch.jit.load(buffer)
    check_against_eager(raises_value_error, [X, True], scripted=loaded)


def test_error_on_one_side_only_fails():
    _fails("scripted raised", raises_value_error, [X, False], scripted=oracle.script(raises_runtime_error),
           args_for_call=lambda i: [X, i == 2])
    _fails("eager raised", raises_value_error, [X, True], scripted=lambda x, flag: scoped_mm(x))


def test_wrong_error_type_from_a_raise_statement_fails():
    # Same message, ValueError eager, RuntimeError scripted.
    _fails("scripted raised builtins.RuntimeError, eager builtins.ValueError",
           raises_value_error, [X, True], scripted=oracle.script(raises_runtime_error))


def test_wrong_error_type_from_an_op_fails():
    def not_implemented(x, y):
        try:
            return mm_shapes(x, y)
        except RuntimeError as error:
            raise NotImplementedError(str(error)) from None
    _fails("scripted raised builtins.NotImplementedError, eager builtins.RuntimeError",
           mm_shapes, [X, BAD], scripted=not_implemented)


def test_wrong_message_fails():
    # The old rule (eager's first line is a substring of the scripted
    # message) accepted this one.
    _fails("messages differ", raises_value_error, [X, True], scripted=oracle.script(raises_other_message))


def test_extra_message_lines_fail():
    def two_lines(x, flag):
        raise ValueError("bad input\nand a second line")
    _fails("messages differ", raises_value_error, [X, True], scripted=two_lines)


def test_empty_message_fails():
    # An empty message would match anything: the oracle refuses to compare it.
    _fails("empty message", raises_empty, [X, True])


# --- the parser of TorchScript's error messages ------------------------------

def _error_of(fn, *args):
    try:
        fn(*args)
    except Exception as error:  # noqa: BLE001 (what it raises is the point)
        return error
    raise AssertionError(f"{fn} did not raise")


def test_unwrap_of_what_torchscript_raises():
    value = _error_of(oracle.script(raises_value_error), X, True)
    assert type(value) is torch.jit.Error
    assert unwrap_torchscript_error(str(value)) == ("builtins.ValueError", "bad input")
    op = _error_of(oracle.script(mm_shapes), X, BAD)
    assert type(op) is RuntimeError
    assert unwrap_torchscript_error(str(op)) == ("RuntimeError", str(_error_of(mm_shapes, X, BAD)))
    forked = _error_of(oracle.script(fork_raises), X, True)
    assert type(forked) is RuntimeError
    assert unwrap_torchscript_error(str(forked)) == ("builtins.ValueError", "bad fork")
    assert unwrap_torchscript_error("plain message\n") == (None, "plain message")


def test_assert_same_error_directly():
    assert_same_error(ValueError("m"), ValueError("m"))
    with pytest.raises(AssertionError, match="messages differ"):
        assert_same_error(ValueError("m"), ValueError("m2"))
    with pytest.raises(AssertionError, match="scripted raised builtins.KeyError"):
        assert_same_error(ValueError("m"), KeyError("m"))
    with pytest.raises(AssertionError, match="empty message"):
        assert_same_error(ValueError(""), ValueError(""))
