"""jitamp on an accelerator other than CPU and CUDA: the test backend
"jitamptest" (tests/backends/jitamptest.py), a PrivateUse1 device with its
own autocast kernels whose policies differ from CPU's and CUDA's on purpose.

jitamp knows no policy for such a device: its smart casts leave the
device's tensors alone (ops/cast_ops.cpp), and its scope ops turn on eager's
state for the device, so each op's own autocast kernel decides, as in eager.
Every case goes through the oracle (eager autocast, same function, same
state), on every executor jitamp offers, saved and loaded, converted,
frozen. Where jitamp cannot be exact (a standalone freeze), the error names
the device.
"""
from __future__ import annotations

import io
import warnings

import pytest
import torch
import torch.nn.functional as F
from torch import Tensor, nn

import jitamp
from oracle import check_against_eager, cpu_autocast, script, torchscript_deprecation_ignored

from backends.jitamptest import load as load_backend
from backends.jitamptest import unsupported_reason

if unsupported_reason() is not None:
    pytest.skip(f"the jitamptest backend cannot be built on torch {torch.__version__}: {unsupported_reason()}",
                allow_module_level=True)

pytestmark = [
    pytest.mark.filterwarnings("ignore:.*target dtype is not supported.*:UserWarning"),
    pytest.mark.filterwarnings("ignore:.*is deprecated.*:DeprecationWarning"),
]

DEVICE = "jitamptest"

# At import (collection), not in a fixture: the autograd engine knows only
# the devices registered before the process's first backward pass.
BACKEND = load_backend()


def on_device(*shape: int, seed: int = 0, dtype: torch.dtype = torch.float32) -> Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(dtype).to(DEVICE)


def every_policy(x: Tensor, w: Tensor, b: Tensor):
    """One op of each policy the backend registers (and one it does not)."""
    with torch.autocast("jitamptest", dtype=torch.bfloat16):
        m = torch.mm(x, w)                      # fp32 here (lower on CPU)
        lin = F.linear(x, w, b)                 # lower
        s = x.sum()                             # lower here (none on CPU)
        sm = torch.softmax(lin, -1)             # fp32_set_opt_dtype
        ln = F.layer_norm(x, [8])               # lower here (none on CPU)
        mu = lin * x                            # fp32
        ad = lin + x                            # promote
        c = torch.cat([lin, x], 0)              # promote
        r = torch.relu(lin)                     # falls through
        conv = F.conv2d(x.reshape(1, 1, 8, 8), w[:3, :3].reshape(1, 1, 3, 3), b[:1])  # fp32 here
    return m, lin, s, sm, ln, mu, ad, c, r, conv


ARGS = lambda: [on_device(8, 8, seed=1), on_device(8, 8, seed=2), on_device(8, seed=3)]  # noqa: E731


def test_the_backend_policies_differ_from_cpus():
    # eager itself (the oracle): what makes a CPU policy applied here visible
    x, w, b = ARGS()
    m, lin, s, *_ = every_policy(x, w, b)
    assert (m.dtype, lin.dtype, s.dtype) == (torch.float32, torch.bfloat16, torch.bfloat16)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert torch.mm(x.cpu(), w.cpu()).dtype == torch.bfloat16


@pytest.mark.parametrize("profiling_executor", [False, True], ids=["jitamp_default", "jitamp_profiling"])
@pytest.mark.parametrize("grad", [False, True], ids=["inference", "training"])
def test_every_policy_as_eager(profiling_executor, grad):
    scripted = script(every_policy, profiling_executor=profiling_executor)
    check_against_eager(every_policy, ARGS(), scripted=scripted, grad=grad)


@pytest.mark.parametrize("outer", ["none", "jitamptest_fp16", "cpu_bf16"])
def test_under_a_callers_region(outer):
    outers = {"none": None, "jitamptest_fp16": lambda: torch.autocast(DEVICE, dtype=torch.float16),
              "cpu_bf16": cpu_autocast(torch.bfloat16)}
    check_against_eager(every_policy, ARGS(), outer=outers[outer], grad=True)


def run_time_device(x: Tensor, w: Tensor, device: str, flag: bool):
    with torch.autocast(device, dtype=torch.bfloat16, enabled=flag):
        y = torch.mm(x, w).sum() + F.linear(x, w).sum()
        return y, torch.is_autocast_enabled(device), torch.zeros(1, dtype=torch.get_autocast_dtype(device))


@pytest.mark.parametrize("profiling_executor", [False, True], ids=["jitamp_default", "jitamp_profiling"])
def test_run_time_device_and_flag(profiling_executor):
    x, w, _ = ARGS()
    scripted = script(run_time_device, profiling_executor=profiling_executor)
    for device in (DEVICE, "cpu"):
        check_against_eager(run_time_device, [x, w, device, True], scripted=scripted, grad=True,
                            args_for_call=lambda i: [x, w, device, i % 2 == 1])


def both_devices(x: Tensor, w: Tensor, xc: Tensor, wc: Tensor):
    # No gradient path crosses devices: the autograd engine runs each
    # device's backward on its own thread, so a leaf reached from both
    # would sum its gradients in an order that varies from run to run, in
    # eager too.
    with torch.autocast("cpu", dtype=torch.bfloat16):
        a = torch.mm(xc, wc)                    # CPU's policy
        b = torch.mm(x, w)                      # not in a jitamptest scope: as it is
        with torch.autocast("jitamptest", dtype=torch.float16):
            c = torch.mm(xc, wc)                # CPU's policy still
            d = F.linear(x, w)                  # the backend's
            with torch.autocast("cpu", enabled=False):
                e = F.linear(x, w)
                ec = F.linear(xc, wc)
        f = x.sum()
        fc = xc.sum()
    return a, b, c, d, e, ec, f, fc


@pytest.mark.parametrize("profiling_executor", [False, True], ids=["jitamp_default", "jitamp_profiling"])
def test_nested_with_cpu_scopes_and_tensors_of_both_devices(profiling_executor):
    x, w, _ = ARGS()
    scripted = script(both_devices, profiling_executor=profiling_executor)
    check_against_eager(both_devices, [x, w, x.cpu(), w.cpu()], scripted=scripted, grad=True)


def mixed_devices_in_one_op(x: Tensor, wc: Tensor):
    with torch.autocast("jitamptest", dtype=torch.bfloat16):
        return torch.mm(x, wc)


def test_tensors_of_both_devices_in_one_op_raise_as_eager():
    x, w, _ = ARGS()
    check_against_eager(mixed_devices_in_one_op, [x, w.cpu()])


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.norm = nn.LayerNorm(8)
        self.conv = nn.Conv2d(1, 2, 3, padding=1)

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("jitamptest", dtype=torch.bfloat16):
            h = self.norm(self.fc(x))
            c = self.conv(x.reshape(1, 1, 8, 8)).sum()
            return torch.softmax(h, -1) * h + c


def net() -> nn.Module:
    torch.manual_seed(0)
    return Net().to(DEVICE)


@pytest.mark.parametrize("profiling_executor", [False, True], ids=["jitamp_default", "jitamp_profiling"])
def test_module_training_and_inference(profiling_executor):
    model = net()
    scripted = script(net(), profiling_executor=profiling_executor)
    x = on_device(8, 8, seed=4)
    check_against_eager(model, [x], scripted=scripted, grad=True)
    with torch.no_grad():
        check_against_eager(model, [x], scripted=scripted)


@pytest.mark.parametrize("profiling_executor", [False, True], ids=["jitamp_default", "jitamp_profiling"])
def test_saved_and_loaded(profiling_executor):
    buffer = io.BytesIO()
    with torchscript_deprecation_ignored():
        torch.jit.save(script(net(), profiling_executor=profiling_executor), buffer)
        loaded = torch.jit.load(io.BytesIO(buffer.getvalue()))
    check_against_eager(net(), [on_device(8, 8, seed=5)], scripted=loaded, grad=True)


class Plain(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x: Tensor) -> Tensor:
        return torch.mm(self.fc(x), x).sum(-1) + x.sum()


def test_convert_autocast_to_the_device(tmp_path):
    from jitamp.cli import main
    from oracle import save_without_jitamp

    torch.manual_seed(0)
    model = Plain().to(DEVICE)
    plain, out = str(tmp_path / "plain.pt"), str(tmp_path / "amp.pt")
    save_without_jitamp(model, plain)
    assert main(["convert", plain, out, "--autocast", "jitamptest:bfloat16"]) == 0
    with torchscript_deprecation_ignored():
        loaded = torch.jit.load(out)

    def eager(x: Tensor) -> Tensor:
        with torch.autocast("jitamptest", dtype=torch.bfloat16):
            return model(x)

    check_against_eager(eager, [on_device(8, 8, seed=6)], scripted=loaded, grad=True)


def test_table_lists_the_backends_autocast_ops():
    from jitamp.cli import main

    out = io.StringIO()
    from contextlib import redirect_stdout
    with redirect_stdout(out):
        assert main(["table", "--device", DEVICE]) == 0
    text = out.getvalue()
    assert "(AutocastPrivateUse1)" in text
    for op in ("aten::mm", "aten::linear", "aten::sum", "aten::cat"):
        assert f"  {op}\n" in text, text


def test_frozen_is_exact_and_standalone_refuses_naming_the_device():
    model = net().eval()
    frozen = jitamp.freeze(script(net().eval()))
    with torch.no_grad():
        check_against_eager(model, [on_device(8, 8, seed=7)], scripted=frozen)
    with pytest.raises(ValueError, match="an autocast scope for jitamptest"):
        with torchscript_deprecation_ignored():
            jitamp.freeze(script(net().eval()), standalone=True)


def unsupported_dtype(x: Tensor, w: Tensor):
    with torch.autocast("jitamptest", dtype=torch.float32):
        return torch.mm(x, w).sum(), torch.is_autocast_enabled("jitamptest")


def test_an_unsupported_dtype_warns_and_disables_as_eager():
    x, w, _ = ARGS()
    scripted = script(unsupported_dtype)
    with warnings.catch_warnings(record=True) as eager_warnings:
        warnings.simplefilter("always")
        unsupported_dtype(x, w)
    with warnings.catch_warnings(record=True) as scripted_warnings:
        warnings.simplefilter("always")
        scripted(x, w)
    texts = lambda ws: [str(w.message) for w in ws if "target dtype" in str(w.message)]  # noqa: E731
    assert texts(scripted_warnings) == texts(eager_warnings) != []
    check_against_eager(unsupported_dtype, [x, w], scripted=scripted)


def in_task(x: Tensor, w: Tensor) -> Tensor:
    return F.linear(x, w) * 2.0


def forked(x: Tensor, w: Tensor) -> Tensor:
    # bfloat16: not the device's default autocast dtype (float16), so a task
    # that did not get its caller's dtype would show
    with torch.autocast("jitamptest", dtype=torch.bfloat16):
        future = torch.jit.fork(in_task, x, w)
        return torch.jit.wait(future)


@pytest.mark.parametrize("profiling_executor", [False, True], ids=["jitamp_default", "jitamp_profiling"])
def test_a_forked_task_gets_the_callers_state_of_the_device(profiling_executor):
    x, w, _ = ARGS()
    assert torch.get_autocast_dtype(DEVICE) != torch.bfloat16
    scripted = script(forked, profiling_executor=profiling_executor)
    check_against_eager(forked, [x, w], scripted=scripted)
    check_against_eager(forked, [x, w], scripted=scripted, grad=True)


NAMED = ["xpu", "mps", "hpu", "mtia", "xla", "ipu", "maia"]


def named_scope(x: Tensor, device: str, flag: bool):
    with torch.autocast(device, dtype=torch.bfloat16, enabled=flag):
        a = torch.is_autocast_enabled(device), torch.zeros(1, dtype=torch.get_autocast_dtype(device))
        with torch.autocast(device, dtype=torch.float32):  # eager warns and disables
            b = torch.is_autocast_enabled(device), torch.mm(x, x)
        return a, b, torch.mm(x, x), torch.is_autocast_cache_enabled()


@pytest.mark.parametrize("device", NAMED)
def test_named_device_scopes_as_eager(device):
    # No such hardware here: the scope's state, eager's checks (warnings, or
    # errors where this torch has no autocast for the device) and queries.
    x = torch.randn(4, 4)
    check_against_eager(named_scope, [x, device, True], args_for_call=lambda i: [x, device, i % 2 == 1],
                        outer=lambda: torch.autocast("cpu", dtype=torch.bfloat16))


def test_a_privateuse1_backend_without_its_module_raises_as_eager(tmp_path):
    # A fresh process: this one has renamed PrivateUse1 to jitamptest.
    from oracle import run_program

    result = run_program(tmp_path, """
import warnings
import torch
import jitamp
from oracle import check_against_eager, script
warnings.simplefilter("ignore")

def scope(x: torch.Tensor):
    with torch.autocast("privateuseone", dtype=torch.bfloat16):
        return x + 1

check_against_eager(scope, [torch.ones(2)])
try:
    scope(torch.ones(2))
except AssertionError as error:
    print("eager:", str(error).splitlines()[0])
""")
    assert result.returncode == 0, result.stderr
    assert "eager: Tried to use AMP with the `privateuseone` backend" in result.stdout, result.stdout
