"""Eager sanity of the jitamptest test backend (tests/backends/jitamptest.py).

Later tests use jitamptest as a third autocast device and eager autocast on it
as their oracle. This module checks eager itself: the device works (copies,
views, printing, comparisons, autograd, scripting) with CPU's values, and eager
autocast on it follows the backend's policy table. It is the one place where
expected dtypes are written down, because eager is what is being checked.

No jitamp here: this file runs on any torch the backend builds on, with or
without jitamp installed (e.g. `pytest --noconftest tests/test_backend_sanity.py`).
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
import torch
import torch.nn.functional as F

from backends.jitamptest import EXTENSION_NAME, NAME, build_directory, load, unsupported_reason

_REASON = unsupported_reason()
if _REASON is not None:
    pytest.skip(
        f"the jitamptest backend cannot be built on torch {torch.__version__}: {_REASON}",
        allow_module_level=True,
    )

pytestmark = [
    # TorchScript's deprecation (DeprecationWarning on 2.13, FutureWarning from 2.14).
    pytest.mark.filterwarnings(r"ignore:`torch\.jit\.\w+` is deprecated:FutureWarning"),
    pytest.mark.filterwarnings(r"ignore:`torch\.jit\.\w+` is deprecated:DeprecationWarning"),
]

DEVICE = NAME
TESTS = os.path.dirname(os.path.abspath(__file__))


# At import (collection), before any test of the session runs a backward
# pass: see load()'s docstring.
BACKEND = load()


@pytest.fixture(scope="module")
def backend():
    return BACKEND


def bits(t: torch.Tensor) -> torch.Tensor:
    """The bytes of `t` (on CPU), to compare bit for bit (NaN, -0.0 included)."""
    return t.detach().cpu().contiguous().reshape(-1).view(torch.uint8)


def assert_bitwise(actual: torch.Tensor, expected: torch.Tensor) -> None:
    assert actual.device.type == DEVICE, actual.device
    assert actual.dtype == expected.dtype
    assert actual.shape == expected.shape
    assert torch.equal(bits(actual), bits(expected)), (actual, expected)


def randn(seed: int, *shapes, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(s, generator=g).to(dtype) for s in shapes]


def on_device(tensors):
    return [t.to(DEVICE) for t in tensors]


# ---------------------------------------------------------------- the device


def test_registration(backend):
    assert torch._C._get_privateuse1_backend_name() == DEVICE
    assert load() is backend
    mod = getattr(torch, DEVICE)
    assert mod.get_amp_supported_dtype() == [torch.bfloat16, torch.float16]
    assert mod.is_available() and mod.device_count() == 1 and mod.current_device() == 0
    assert mod._is_in_bad_fork() is False
    t = torch.ones(2).jitamptest()
    assert t.is_jitamptest and t.device == torch.device(DEVICE, 0)
    assert torch.device(DEVICE).type == DEVICE
    assert torch.nn.Linear(2, 2).jitamptest().weight.device.type == DEVICE
    routed = backend.routed_ops()
    assert "aten::native_layer_norm" in routed and "aten::convolution" in routed


def test_becomes_the_process_accelerator():
    """Registered, the backend is the process's accelerator where torch has
    one (torch.accelerator): pin_memory() then pins for it (host memory)."""
    if not hasattr(torch, "accelerator"):
        pytest.skip(f"torch {torch.__version__} has no torch.accelerator")
    assert torch.accelerator.current_accelerator() == torch.device(DEVICE)
    assert torch.accelerator.device_count() == 1
    host = torch.arange(6.0)
    pinned = host.pin_memory()
    assert pinned.is_pinned() and pinned[2:].is_pinned() and not host.is_pinned()
    assert_bitwise(pinned.to(DEVICE, non_blocking=True), host)


def test_view_ops_with_cpu_kernels_have_device_kernels():
    """An aten view op with a CPU-only kernel that reached the CPU fallback
    would return a copy; the backend registers each (the fallback raises)."""
    ops = set(torch._C._dispatch_get_all_op_names())
    missing = []
    for schema in torch._C._jit_get_all_schemas():
        name = schema.name + ("." + schema.overload_name if schema.overload_name else "")
        if name not in ops or "nested" in name:
            continue
        aliases = any(r.alias_info is not None and not r.alias_info.is_write for r in schema.returns)
        if aliases and torch._C._dispatch_has_kernel_for_dispatch_key(name, "CPU"):
            if not torch._C._dispatch_has_kernel_for_dispatch_key(name, "PrivateUse1"):
                missing.append(name)
    assert missing == []


def _run_python(source: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=TESTS + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(source)], capture_output=True,
                          text=True, env=env, timeout=600)


def test_another_process_reuses_the_build():
    """... and exits cleanly right after a backward pass on the device (see
    _drain_device_autograd_thread in backends/jitamptest.py)."""
    library = os.path.join(build_directory(), EXTENSION_NAME + ".so")
    before = os.stat(library).st_mtime_ns
    result = _run_python("""
        import torch
        from backends.jitamptest import load
        load()
        print(torch.ones(2).jitamptest().device)
        model = torch.nn.Linear(4, 4).jitamptest()
        model(torch.randn(2, 4, device="jitamptest")).sum().backward()
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "jitamptest:0"
    assert os.stat(library).st_mtime_ns == before


def test_loading_after_a_backward_pass_is_refused():
    result = _run_python("""
        import torch
        from backends.jitamptest import load
        w = torch.ones(2, requires_grad=True)
        (w * 3.0).sum().backward()
        for require_autograd in (True, False):
            try:
                load(require_autograd=require_autograd)
                print("loaded", torch.ones(2, device="jitamptest").sum().item())
            except RuntimeError as e:
                print(str(e).splitlines()[0][:60])
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "autograd cannot run on jitamptest tensors in this process: t", "loaded 2.0"]


def test_load_refuses_another_privateuse1_name():
    result = _run_python("""
        import torch
        from backends.jitamptest import load
        torch.utils.rename_privateuse1_backend("otherdevice")
        try:
            load()
        except RuntimeError as e:
            print(e)
    """)
    assert result.returncode == 0, result.stderr
    assert "already renamed to 'otherdevice'" in result.stdout


# ---------------------------------------------------------------- memory


def _values(dtype: torch.dtype) -> torch.Tensor:
    if dtype == torch.bool:
        return torch.tensor([[True, False, True], [False, False, True]])
    if dtype.is_complex:
        return torch.tensor([[1 + 2j, -0.0 - 1j, float("inf")], [float("nan"), 3.5j, -2]], dtype=dtype)
    if dtype.is_floating_point:
        return torch.tensor([[1.5, -0.0, float("inf")], [float("nan"), -3.25, 1e-3]], dtype=dtype)
    return torch.tensor([[1, 0, 127], [-5, 3, 7]]).to(dtype)


DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32,
          torch.int8, torch.uint8, torch.bool, torch.complex64]
LAYOUTS = {
    "contiguous": lambda t: t,
    "transposed": lambda t: t.t(),
    "strided_slice": lambda t: t[:, ::2],
    "scalar": lambda t: t[1, 2],
    "empty": lambda t: t[:0],
    "expanded": lambda t: t[:1].expand(4, 3),
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_copies_round_trip_bitwise(dtype, layout):
    src = LAYOUTS[layout](_values(dtype))
    d = src.to(DEVICE)
    assert_bitwise(d, src)
    assert torch.equal(bits(d.cpu()), bits(src))
    assert_bitwise(d.clone(), src.clone())
    # Into an existing view, both ways.
    target = torch.zeros(5, 4, dtype=dtype, device=DEVICE)
    if src.dim() == 2 and src.numel():
        target[1:1 + src.shape[0], :src.shape[1]].copy_(src)
        host = torch.zeros(5, 4, dtype=dtype)
        host[1:1 + src.shape[0], :src.shape[1]].copy_(src)
        assert_bitwise(target, host)
        back = torch.zeros(4, 5, dtype=dtype).t()
        back.copy_(target)
        assert torch.equal(bits(back), bits(host))


@pytest.mark.parametrize("to", [torch.float32, torch.bfloat16, torch.float16, torch.int64, torch.bool])
def test_dtype_conversions_match_cpu(to):
    src = _values(torch.float32).nan_to_num(0.0, 100.0, -100.0)
    assert_bitwise(src.to(DEVICE).to(to), src.to(to))
    assert_bitwise(src.to(DEVICE, to), src.to(to))


def test_channels_last_and_conj_neg_bits():
    x = randn(0, (2, 3, 4, 5))[0].to(memory_format=torch.channels_last)
    d = x.to(DEVICE)
    assert d.is_contiguous(memory_format=torch.channels_last)
    assert_bitwise(d, x)
    c = torch.tensor([1 + 2j, 3 - 4j])
    assert_bitwise(c.to(DEVICE).conj(), c.conj().resolve_conj())
    assert_bitwise(c.conj().to(DEVICE), c.conj().resolve_conj())
    assert_bitwise(c.to(DEVICE).conj().imag, c.conj().imag.resolve_neg())
    into = torch.zeros(2, dtype=torch.complex64, device=DEVICE)
    into.conj().copy_(c)
    assert_bitwise(into, c.conj().resolve_conj())


VIEWS = {
    "view": lambda t: t.view(3, 4),
    "reshape": lambda t: t.reshape(2, 6),
    "flatten": lambda t: t.flatten(),
    "t": lambda t: t.t(),
    "transpose": lambda t: t.transpose(0, 1),
    "permute": lambda t: t.permute(1, 0),
    "select": lambda t: t[1],
    "slice": lambda t: t[:, 1:5:2],
    "narrow": lambda t: t.narrow(1, 2, 3),
    "unsqueeze": lambda t: t.unsqueeze(0),
    "squeeze": lambda t: t.unsqueeze(1).squeeze(1),
    "expand": lambda t: t[:1].expand(3, 6),
    "diagonal": lambda t: t.diagonal(),
    "as_strided": lambda t: t.as_strided((2, 2), (1, 3), 1),
    "unfold": lambda t: t.unfold(1, 2, 2),
    "unbind": lambda t: t.unbind(0)[1],
    "split": lambda t: t.split(2, 1)[1],
    "detach": lambda t: t.detach(),
    "view_dtype": lambda t: t.view(torch.int32),
}


@pytest.mark.parametrize("name", VIEWS)
def test_views_alias_device_memory(name):
    host = torch.arange(12.0).reshape(2, 6)
    d = host.to(DEVICE)
    view = VIEWS[name](d)
    assert view.device.type == DEVICE
    assert view.untyped_storage().data_ptr() == d.untyped_storage().data_ptr()
    assert_bitwise(view, VIEWS[name](host))
    # Writes through the view reach the base (in-place ops run on CPU and are
    # copied back into the view's memory).
    if name not in ("expand", "view_dtype"):
        view.mul_(-1)
        VIEWS[name](host).mul_(-1)
        assert_bitwise(d, host)


def test_view_as_real_aliases():
    c = torch.tensor([1 + 2j, 3 - 4j]).to(DEVICE)
    r = torch.view_as_real(c)
    r[0, 1] = 9.0
    assert c.cpu()[0] == 1 + 9j
    assert torch.view_as_complex(r).untyped_storage().data_ptr() == c.untyped_storage().data_ptr()


def test_factories_resize_set_item():
    assert_bitwise(torch.zeros(2, 3, device=DEVICE), torch.zeros(2, 3))
    assert_bitwise(torch.ones(3, dtype=torch.int64, device=DEVICE), torch.ones(3, dtype=torch.int64))
    assert_bitwise(torch.full((2,), 3.5, device=DEVICE), torch.full((2,), 3.5))
    assert_bitwise(torch.arange(5, device=DEVICE), torch.arange(5))
    assert_bitwise(torch.tensor([1.0, 2.0], device=DEVICE), torch.tensor([1.0, 2.0]))
    assert_bitwise(torch.empty(2, 3, device=DEVICE).fill_(2.5), torch.full((2, 3), 2.5))
    assert_bitwise(torch.ones(2, 3, device=DEVICE).zero_(), torch.zeros(2, 3))
    t = torch.arange(4.0, device=DEVICE)
    t.resize_(2, 3)
    assert t.shape == (2, 3) and t.device.type == DEVICE
    assert_bitwise(t.flatten()[:4], torch.arange(4.0))
    s = torch.empty(0, device=DEVICE).set_(torch.arange(3.0, device=DEVICE))
    assert_bitwise(s, torch.arange(3.0))
    assert torch.empty(3, device=DEVICE).set_().shape == (0,)
    assert torch.tensor(2.5, device=DEVICE).item() == 2.5
    assert torch.tensor([1, 2], device=DEVICE).tolist() == [1, 2]


def test_printing_matches_cpu():
    for host in (torch.randn(3, 4), torch.arange(5), torch.randn(2, 2).bfloat16(), torch.randn(500)):
        text = "".join(repr(host.to(DEVICE)).split())  # line breaks differ
        assert ",device='jitamptest:0'" in text
        assert text.replace(",device='jitamptest:0'", "") == "".join(repr(host).split())


def test_comparisons():
    a, b = randn(1, (3, 4), (3, 4))
    da, db = on_device((a, b))
    assert_bitwise(da == db, a == b)
    assert_bitwise(da < db, a < b)
    assert torch.equal(da, da.clone()) and not torch.equal(da, db)
    assert torch.allclose(da, da + 1e-9) and not torch.allclose(da, db)
    assert bool((da == da).all())
    torch.testing.assert_close(da, da.clone())


def test_random_ops_follow_torch_manual_seed():
    torch.manual_seed(7)
    on_dev = torch.randn(5, device=DEVICE)
    torch.manual_seed(7)
    assert_bitwise(on_dev, torch.randn(5))


def test_save_load_and_deepcopy(tmp_path):
    import copy

    d = torch.arange(3.0, device=DEVICE)
    path = tmp_path / "t.pt"
    torch.save(d, path)
    assert_bitwise(torch.load(path, weights_only=True), torch.arange(3.0))
    assert_bitwise(copy.deepcopy(d), torch.arange(3.0))


# ---------------------------------------------------------------- ops and autograd

OPS = {
    "mm": (lambda a, b: torch.mm(a, b), [(4, 5), (5, 3)]),
    "addmm": (lambda c, a, b: torch.addmm(c, a, b), [(3,), (4, 5), (5, 3)]),
    "linear": (lambda x, w, b: F.linear(x, w, b), [(4, 5), (3, 5), (3,)]),
    "linear_3d": (lambda x, w, b: F.linear(x, w, b), [(2, 4, 5), (3, 5), (3,)]),
    "matmul": (lambda a, b: torch.matmul(a, b), [(2, 4, 5), (5, 3)]),
    "bmm": (lambda a, b: torch.bmm(a, b), [(2, 4, 5), (2, 5, 3)]),
    "conv2d": (lambda x, w, b: F.conv2d(x, w, b, padding=1), [(2, 3, 6, 6), (4, 3, 3, 3), (4,)]),
    "conv2d_same": (lambda x, w, b: F.conv2d(x, w, b, padding="same"), [(2, 3, 6, 6), (4, 3, 3, 3), (4,)]),
    "softmax": (lambda x: torch.softmax(x, 1), [(4, 5)]),
    "log_softmax": (lambda x: F.log_softmax(x, 1), [(4, 5)]),
    "add": (lambda a, b: a + b, [(4, 5), (4, 5)]),
    "add_alpha": (lambda a, b: torch.add(a, b, alpha=0.5), [(4, 5), (5,)]),
    "sub": (lambda a, b: a - b, [(4, 5), (4, 5)]),
    "mul": (lambda a, b: a * b, [(4, 5), (4, 5)]),
    "cat": (lambda a, b: torch.cat([a, b], 0), [(2, 5), (3, 5)]),
    "stack": (lambda a, b: torch.stack([a, b]), [(2, 5), (2, 5)]),
    "sum": (lambda x: x.sum(), [(4, 5)]),
    "sum_dim": (lambda x: x.sum(1), [(4, 5)]),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (5,), w, b), [(4, 5), (5,), (5,)]),
    "group_norm": (lambda x, w, b: F.group_norm(x, 2, w, b), [(2, 4, 3), (4,), (4,)]),
    "relu": (lambda x: torch.relu(x), [(4, 5)]),
    "gelu": (lambda x: F.gelu(x), [(4, 5)]),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), [(4, 5)]),
    "addr": (lambda c, a, b: torch.addr(c, a, b), [(4, 5), (4,), (5,)]),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("name", OPS)
def test_ops_give_cpu_values(name, dtype):
    fn, shapes = OPS[name]
    args = randn(2, *shapes, dtype=dtype)
    assert_bitwise(fn(*on_device(args)), fn(*args))


GRAD_OPS = ["mm", "addmm", "linear", "linear_3d", "matmul", "conv2d", "softmax", "log_softmax",
            "layer_norm", "sum", "sum_dim", "cat", "add", "mul", "sub", "relu", "gelu"]


def _gradients(fn, args):
    leaves = [a.detach().clone().requires_grad_() for a in args]
    out = fn(*leaves)
    seed = torch.randn(out.shape, generator=torch.Generator().manual_seed(3)).to(out.dtype)
    out.backward(seed.to(out.device))
    return out, [leaf.grad for leaf in leaves]


@pytest.mark.parametrize("name", GRAD_OPS)
def test_autograd_gives_cpu_gradients(name):
    fn, shapes = OPS[name]
    args = randn(4, *shapes)
    out, grads = _gradients(fn, on_device(args))
    expected_out, expected_grads = _gradients(fn, args)
    assert_bitwise(out.detach(), expected_out.detach())
    for grad, expected in zip(grads, expected_grads):
        assert_bitwise(grad, expected)


def test_autograd_through_a_small_network():
    def build():
        torch.manual_seed(11)
        return torch.nn.Sequential(
            torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ReLU(), torch.nn.Flatten(),
            torch.nn.Linear(64, 8), torch.nn.GELU(), torch.nn.LayerNorm(8), torch.nn.Linear(8, 3))

    x = randn(5, (2, 3, 4, 4))[0]
    host, dev = build(), build().jitamptest()
    for model, inp in ((host, x), (dev, x.to(DEVICE))):
        loss = F.log_softmax(model(inp), 1).sum() + model(inp).sum()  # two paths: accumulation
        loss.backward()
    for (name, p), q in zip(host.named_parameters(), dev.parameters()):
        assert_bitwise(q.grad, p.grad)


# ---------------------------------------------------------------- autocast

LOWER, FP32, FP32_SET_OPT_DTYPE, PROMOTE = "lower_precision_fp", "fp32", "fp32_set_opt_dtype", "promote"

# The backend's policy (jitamptest.cpp, table in jitamptest.py).
POLICY = {
    "mm": FP32,
    "addmm": LOWER,
    "linear": LOWER,
    "linear_3d": LOWER,
    "conv2d": FP32,
    "conv2d_same": FP32,  # conv2d.padding
    "sum": LOWER,
    "sum_dim": LOWER,
    "softmax": FP32_SET_OPT_DTYPE,
    "layer_norm": LOWER,
    "mul": FP32,
    "add": PROMOTE,
    "cat": PROMOTE,
}

# Output dtypes with float32 inputs under torch.autocast("jitamptest", dtype=torch.bfloat16).
FLOAT32_INPUTS_BF16 = {
    "mm": torch.float32,
    "addmm": torch.bfloat16,
    "linear": torch.bfloat16,
    "linear_3d": torch.bfloat16,
    "conv2d": torch.float32,
    "conv2d_same": torch.float32,
    "sum": torch.bfloat16,
    "sum_dim": torch.bfloat16,
    "softmax": torch.float32,
    "layer_norm": torch.bfloat16,
    "mul": torch.float32,
    "add": torch.float32,
    "cat": torch.float32,
}

# Not in the table: fall through, keep their input dtype (matmul reaches mm).
OUTSIDE = {"bmm", "relu", "gelu", "log_softmax", "sub", "stack", "group_norm", "addr"}


def _reference(name, args, low):
    """What the policy computes, on CPU with explicit casts."""
    fn, _ = OPS[name]
    policy = POLICY[name]
    if policy == FP32_SET_OPT_DTYPE:
        return torch.softmax(args[0], 1, dtype=torch.float32)
    if policy == LOWER:
        target = low
    elif policy == FP32:
        target = torch.float32
    else:
        target = args[0].dtype
        for a in args[1:]:
            target = torch.promote_types(target, a.dtype)
    return fn(*[a.to(target) if a.is_floating_point() else a for a in args])


def test_policy_table_matches_the_documented_one():
    assert set(FLOAT32_INPUTS_BF16) == set(POLICY)
    for name, policy in POLICY.items():
        expected = {LOWER: torch.bfloat16, PROMOTE: torch.float32}.get(policy, torch.float32)
        assert FLOAT32_INPUTS_BF16[name] == expected


@pytest.mark.parametrize("low", [torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("name", POLICY)
def test_autocast_policy_with_float32_inputs(name, low):
    fn, shapes = OPS[name]
    args = randn(6, *shapes)
    with torch.autocast(DEVICE, dtype=low):
        out = fn(*on_device(args))
    if low == torch.bfloat16:
        assert out.dtype == FLOAT32_INPUTS_BF16[name]
    assert_bitwise(out, _reference(name, args, low))


@pytest.mark.parametrize("one_float32", [False, True], ids=["all_bf16", "one_float32"])
@pytest.mark.parametrize("name", POLICY)
def test_autocast_policy_with_lower_precision_inputs(name, one_float32):
    fn, shapes = OPS[name]
    args = randn(6, *shapes, dtype=torch.bfloat16)
    if one_float32:
        args[-1] = args[-1].float()
    with torch.autocast(DEVICE, dtype=torch.bfloat16):
        out = fn(*on_device(args))
    if POLICY[name] == LOWER:
        expected = torch.bfloat16
    elif POLICY[name] == PROMOTE:  # promote widens to the widest argument
        expected = torch.float32 if one_float32 else torch.bfloat16
    else:
        expected = torch.float32
    assert out.dtype == expected
    assert_bitwise(out, _reference(name, args, torch.bfloat16))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("name", sorted(OUTSIDE | {"matmul"}))
def test_ops_outside_the_table_fall_through(name, dtype):
    fn, shapes = OPS[name]
    args = randn(8, *shapes, dtype=dtype)
    with torch.autocast(DEVICE, dtype=torch.bfloat16):
        out = fn(*on_device(args))
    if name == "matmul":  # CompositeImplicit: decomposes into mm, which is fp32 here
        assert out.dtype == torch.float32
        assert_bitwise(out, fn(*[a.float() for a in args]))
    else:
        assert out.dtype == dtype
        assert_bitwise(out, fn(*args))


def test_cpu_tensors_are_untouched_by_jitamptest_autocast():
    a, b, c = randn(9, (4, 5), (5, 3), (3,))
    with torch.autocast(DEVICE, dtype=torch.bfloat16):
        assert not torch.is_autocast_enabled("cpu")
        assert torch.addmm(c, a, b).dtype == torch.float32
        assert F.linear(a, b.t(), c).dtype == torch.float32
        mixed = torch.mm(a.to(DEVICE), b.to(DEVICE)) + c.to(DEVICE)
        assert mixed.dtype == torch.float32


# Ops whose jitamptest output dtype differs from eager CPU autocast's with the
# given inputs: a jitamp that applied CPU's policy here would be caught.
DIFFERS_FROM_CPU = {
    "mm": torch.float32, "conv2d": torch.float32, "sum": torch.float32,
    "layer_norm": torch.float32, "mul": torch.bfloat16, "softmax": torch.bfloat16,
}


@pytest.mark.parametrize("name", DIFFERS_FROM_CPU)
def test_policy_differs_from_cpu(name):
    fn, shapes = OPS[name]
    args = randn(10, *shapes, dtype=DIFFERS_FROM_CPU[name])
    with torch.autocast("cpu", dtype=torch.bfloat16):
        cpu_out = fn(*args)
    with torch.autocast(DEVICE, dtype=torch.bfloat16):
        dev_out = fn(*on_device(args))
    assert dev_out.dtype != cpu_out.dtype


def test_autocast_state_queries():
    assert torch.amp.is_autocast_available(DEVICE)
    assert not torch.is_autocast_enabled(DEVICE)
    assert torch.get_autocast_dtype(DEVICE) == torch.float16  # PyTorch's default for PrivateUse1
    with torch.autocast(DEVICE, dtype=torch.bfloat16):
        assert torch.is_autocast_enabled(DEVICE)
        assert torch.get_autocast_dtype(DEVICE) == torch.bfloat16
        assert not torch.is_autocast_enabled("cpu")
        with torch.autocast(DEVICE, enabled=False):
            assert not torch.is_autocast_enabled(DEVICE)
            a, b = on_device(randn(12, (4, 5), (5, 3), dtype=torch.bfloat16))
            assert (a @ b).dtype == torch.bfloat16
        assert torch.is_autocast_enabled(DEVICE)
    assert not torch.is_autocast_enabled(DEVICE)
    assert torch.get_autocast_dtype(DEVICE) == torch.float16
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert not torch.is_autocast_enabled(DEVICE)


def test_unsupported_dtype_warns_and_disables():
    with pytest.warns(UserWarning, match="In jitamptest autocast, but the target dtype is not supported"):
        with torch.autocast(DEVICE, dtype=torch.float32):
            assert not torch.is_autocast_enabled(DEVICE)
            a, b = on_device(randn(13, (4, 5), (5, 3), dtype=torch.bfloat16))
            assert (a @ b).dtype == torch.bfloat16
    assert not torch.is_autocast_enabled(DEVICE)


def test_autocast_autograd_gives_float32_gradients():
    x, w, b = randn(14, (4, 5), (3, 5), (3,))
    leaves = [t.to(DEVICE).requires_grad_() for t in (x, w, b)]
    with torch.autocast(DEVICE, dtype=torch.bfloat16):
        out = F.linear(*leaves)
    assert out.dtype == torch.bfloat16
    out.float().sum().backward()
    host = [t.clone().requires_grad_() for t in (x, w, b)]
    F.linear(*[t.bfloat16() for t in host]).float().sum().backward()
    for leaf, ref in zip(leaves, host):
        assert_bitwise(leaf.grad, ref.grad)


# ---------------------------------------------------------------- TorchScript


def test_torchscript_runs_on_the_device():
    @torch.jit.script
    def to_device_mm(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return torch.mm(x.to("jitamptest"), w.to("jitamptest"))

    @torch.jit.script
    def on_device_ops(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return torch.softmax(torch.mm(x, w), 1) + 1.0

    x, w = randn(15, (4, 5), (5, 3))
    assert_bitwise(to_device_mm(x, w), torch.mm(x, w))
    assert_bitwise(on_device_ops(*on_device((x, w))), torch.softmax(torch.mm(x, w), 1) + 1.0)
