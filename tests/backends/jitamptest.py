"""jitamptest: a test accelerator with its own autocast, for checking jitamp
on a device that is neither CPU nor CUDA.

What it is for. jitamp must apply the autocast policy of the device named in
`torch.autocast(device_type, ...)`, exactly as eager autocast does. With only
CPU (and CUDA, where there is a GPU) a jitamp that hard-coded one of those
policies, or mixed them up, can go unnoticed. This backend is a third device,
available everywhere, whose policy differs from both on purpose (table
below), so the tests' oracle (eager autocast) catches such a mistake.

What it is. A C++ extension (jitamptest.cpp) behind PyTorch's PrivateUse1
device type, after the pattern of PyTorch's open-registration test backend:

  * memory: host memory behind the device (an allocator registered for
    PrivateUse1), one device `jitamptest:0`, a device guard, PrivateUse1
    hooks, and explicit kernels for allocation, copies to and from CPU, views
    (view, as_strided, _reshape_alias, unfold, view_as_real/complex),
    resize_, set_, .item(), fill_ and zero_;
  * compute: every other op runs CPU's kernel through a boxed CPU fallback
    (at::native::cpu_fallback), so values and gradients are CPU's bit for bit;
    ops that have both a CPU kernel and a CompositeExplicitAutograd kernel
    (e.g. native_layer_norm), and convolution, are routed to CPU's kernel too
    (the extension's `routed_ops()` lists them);
  * autocast: a fall-through for all ops on AutocastPrivateUse1 and the policy
    below on that key.

`load()` builds the extension once per process, cached on disk under
build/test-backends/<torch version>/ in the repository (git-ignored); a later
process reuses the build (torch.utils.cpp_extension: ninja finds nothing to
do). It then renames PrivateUse1 to "jitamptest" (possible once per process),
registers the device module `torch.jitamptest` (get_amp_supported_dtype,
is_available, device_count, current_device, set_device, device, synchronize,
_is_in_bad_fork, manual_seed, manual_seed_all, get_rng_state,
set_rng_state, ...) and generates `Tensor.jitamptest()`, `Tensor.is_jitamptest`
and `Module.jitamptest()`. Random ops run on CPU through the fallback and so
draw from CPU's default generator: seeding "the device" seeds that.

Autocast policy on "jitamptest" (supported dtypes: bfloat16, float16). The
"out" columns are the output dtypes under
`torch.autocast("jitamptest", dtype=torch.bfloat16)` with float32 and with
bfloat16 inputs, as test_backend_sanity.py checks them; CPU's and CUDA's
policies for the same op are given for comparison ("none": no autocast kernel,
the op runs in its input dtypes):

  op                      policy here         out (fp32 in)  out (bf16 in)  CPU       CUDA
  ----------------------  ------------------  -------------  -------------  --------  ------------------
  mm                      fp32                fp32           fp32           lower     lower
  addmm, linear           lower_precision_fp  bf16           bf16           lower     lower
  conv2d, conv2d.padding  fp32                fp32           fp32           lower     lower (conv2d only)
  sum, sum.dim_IntList    lower_precision_fp  bf16           bf16           none      fp32_set_opt_dtype
  softmax.int             fp32_set_opt_dtype  fp32           fp32           none      fp32_set_opt_dtype
  layer_norm              lower_precision_fp  bf16           bf16           none      fp32
  mul.Tensor              fp32                fp32           fp32           none      none
  add.Tensor              promote             fp32           bf16 (*)       none      none
  cat                     promote             fp32           bf16 (*)       promote   none
  anything else           falls through (e.g. bmm, relu, log_softmax keep their input
                          dtype; matmul decomposes into mm, so fp32)

  "lower" = lower_precision_fp: floating-point arguments on this device are
  cast to the autocast dtype. (*) all inputs bf16; one float32 input -> fp32.
  Tensors on CPU pass through unchanged, as in eager (autocast casts only
  tensors on its own device).

Values: computed by CPU's kernels on the cast inputs, so equal bit for bit
to CPU with explicit casts. One known exception outside the table:
scaled_dot_product_attention takes its math path on this device where CPU
takes a fused kernel (values agree to ~1e-6, not bitwise).
"""
from __future__ import annotations

import atexit
import os
import shutil
import sys
import threading
import types
from typing import Any, Optional

import torch

NAME = "jitamptest"
EXTENSION_NAME = "jitamptest_backend"

_HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(_HERE, "jitamptest.cpp")
REPO_ROOT = os.path.dirname(os.path.dirname(_HERE))

_lock = threading.Lock()


def build_directory() -> str:
    """Where the extension is built and cached: one directory per torch
    version, under the repository's git-ignored build/."""
    return os.path.join(REPO_ROOT, "build", "test-backends", torch.__version__)


def unsupported_reason() -> Optional[str]:
    """Why the backend cannot be built on this torch (the missing API), or
    None. A build that fails for any other reason is an error, not a skip."""
    missing = []
    for owner, owner_name, attr in (
        (torch.utils, "torch.utils", "rename_privateuse1_backend"),
        (torch.utils, "torch.utils", "generate_methods_for_privateuse1_backend"),
        (torch, "torch", "_register_device_module"),
        (torch, "torch", "get_autocast_dtype"),
        (torch.amp, "torch.amp", "is_autocast_available"),
    ):
        if not hasattr(owner, attr):
            missing.append(f"{owner_name}.{attr}")
    from torch.utils import cpp_extension

    include = os.path.join(os.path.dirname(torch.__file__), "include")
    for header, needle in (
        ("ATen/autocast_mode.h", "KERNEL_PRIVATEUSEONE"),
        ("ATen/native/CPUFallback.h", "cpu_fallback"),
        ("ATen/detail/PrivateUse1HooksInterface.h", "RegisterPrivateUse1HooksInterface"),
    ):
        path = os.path.join(include, header)
        try:
            with open(path) as f:
                found = needle in f.read()
        except OSError:
            found = False
        if not found:
            missing.append(f"{needle} in <{header}>")
    if missing:
        return "missing " + ", ".join(missing)
    try:
        cpp_extension.verify_ninja_availability()
    except RuntimeError:
        return "ninja is not installed (torch.utils.cpp_extension.load needs it)"
    compiler = os.environ.get("CXX", "c++")
    if shutil.which(compiler) is None:
        return f"no C++ compiler ({compiler!r} not found)"
    return None


def load(require_autograd: bool = True) -> Any:
    """Builds (or reuses) and loads the extension, registers the "jitamptest"
    device; returns the extension module. Idempotent within a process.

    Call it before the first backward pass of the process, e.g. when a test
    module is imported (pytest imports every test module before running any
    test): the autograd engine sizes its per-device queues once, at its first
    backward, from the device guards registered then, and a backend
    registered later has no queue, so backward on its tensors fails ("0 <=
    device.index() && device.index() < ...device_ready_queues_.size()").
    load() runs a tiny backward on the device to find out; with
    require_autograd (the default) it raises RuntimeError if that failed,
    now and on every later call.

    Raises RuntimeError if PrivateUse1 was already renamed to another backend
    (a process can rename it only once)."""
    extension = _load()
    error = sys.modules[f"torch.{NAME}"]._autograd_error
    if require_autograd and error is not None:
        raise RuntimeError(error)
    return extension


def _load() -> Any:
    existing = _registered_extension()
    if existing is not None:
        return existing
    with _lock:
        existing = _registered_extension()
        if existing is not None:
            return existing
        current = torch._C._get_privateuse1_backend_name()
        if current not in ("privateuseone", NAME):
            raise RuntimeError(
                f"cannot load the {NAME} test backend: PrivateUse1 is already "
                f"renamed to {current!r} in this process, and a process can rename "
                "it only once. Run the jitamptest tests in a process that does not "
                f"load the {current!r} backend."
            )
        if hasattr(torch, NAME):
            raise RuntimeError(
                f"cannot load the {NAME} test backend: torch.{NAME} exists but "
                "was not registered by tests/backends/jitamptest.py"
            )
        extension = _build()
        if current == "privateuseone":
            torch.utils.rename_privateuse1_backend(NAME)
        module = _device_module(extension)
        torch._register_device_module(NAME, module)
        if not hasattr(torch.Tensor, NAME):
            torch.utils.generate_methods_for_privateuse1_backend()
        try:
            module._autograd_error = _autograd_probe()
        except Exception as e:
            module._autograd_error = f"the {NAME} autograd probe failed: {e!r}"
            raise
        if module._autograd_error is None:
            atexit.register(_drain_device_autograd_thread)
        return extension


def _autograd_probe() -> Optional[str]:
    """None if backward works on the device, else why not."""
    leaf = torch.ones(2, device=NAME, requires_grad=True)
    try:
        (leaf * 2.0).sum().backward()
    except RuntimeError as e:
        if "device_ready_queues_" not in str(e):
            raise
        return (
            f"autograd cannot run on {NAME} tensors in this process: the {NAME} "
            "backend was loaded after the autograd engine started (a backward pass "
            "ran before), and the engine sizes its per-device queues only once. "
            "Load it earlier, e.g. when the test module is imported. "
            f"(engine: {str(e).splitlines()[0]})"
        )
    if not torch.equal(leaf.grad.cpu(), torch.full((2,), 2.0)):
        raise RuntimeError(f"backward on {NAME} gave {leaf.grad.cpu()}, expected 2.0s")
    return None


_DRAIN_KEEPALIVE: list = []


def _drain_device_autograd_thread() -> None:
    """atexit: lets the autograd engine's jitamptest thread finish its last
    graph task while Python can still run.

    A backward pass that used the device ends on the engine's device thread,
    which may drop the last reference to the graph task after backward()
    returned. On torch 2.13 and 2.15 (not 2.4.1) the graph task's thread-local
    state holds a Python object (the contextvars context stashed by
    torch.autograd.graph._engine_run_backward), so dropping it takes the GIL;
    if the interpreter is finalizing by then, the thread is ended inside a
    noexcept destructor and the process aborts ("terminate called without an
    active exception"), typically for a short program that exits right after
    a backward. Here, before finalization, one more backward through the
    device: the device thread handles its tasks in order, so when this one
    completes the earlier graph tasks are gone. This one is started with the
    engine directly, without the stashed context, and its tensors are kept
    alive here, so releasing it later needs no Python.
    """
    from torch.autograd.variable import Variable

    leaf = torch.ones(1, device=NAME, requires_grad=True)
    out = (leaf * 1.0).sum()
    grad = torch.ones_like(out)
    _DRAIN_KEEPALIVE.append((leaf, out, grad))
    Variable._execution_engine.run_backward(
        (out,), (grad,), False, False, (), True, True)


def _registered_extension() -> Any:
    module = sys.modules.get(f"torch.{NAME}")
    return getattr(module, "_extension", None)


def _build() -> Any:
    from torch.utils import cpp_extension

    directory = build_directory()
    os.makedirs(directory, exist_ok=True)
    return cpp_extension.load(
        name=EXTENSION_NAME,
        sources=[SOURCE],
        build_directory=directory,
        extra_cflags=["-O1"],
        verbose=bool(os.environ.get("JITAMPTEST_VERBOSE")),
    )


def _check_device(device: Any) -> None:
    if device is None:
        return
    if isinstance(device, int):
        index = device
    else:
        device = torch.device(device)
        if device.type != NAME:
            raise ValueError(f"expected a {NAME} device, got {device}")
        index = device.index if device.index is not None else 0
    if index != 0:
        raise ValueError(f"{NAME} has one device (index 0); got index {index}")


def _device_module(extension: Any) -> types.ModuleType:
    """torch.jitamptest: what torch asks of a PrivateUse1 backend's module."""
    m = types.ModuleType(
        f"torch.{NAME}",
        f"The {NAME} test backend's device module (tests/backends/jitamptest.py).",
    )
    m._extension = extension
    m._autograd_error = None  # set by load()

    def get_amp_supported_dtype() -> list:
        return [torch.bfloat16, torch.float16]

    def is_available() -> bool:
        return True

    def is_initialized() -> bool:
        return True

    def _lazy_init() -> None:
        pass

    def device_count() -> int:
        return 1

    def current_device() -> int:
        return 0

    def set_device(device: Any) -> None:
        _check_device(device)

    def synchronize(device: Any = None) -> None:
        _check_device(device)  # kernels are synchronous

    class device:
        """Context manager selecting a device; there is only jitamptest:0."""

        def __init__(self, device: Any) -> None:
            _check_device(device)

        def __enter__(self) -> None:
            pass

        def __exit__(self, *exc: Any) -> None:
            pass

    m.device = device

    def _is_in_bad_fork() -> bool:
        return False

    # Random ops run on CPU (the fallback) and draw from CPU's default generator.
    def manual_seed(seed: int) -> None:
        torch.default_generator.manual_seed(int(seed))

    def manual_seed_all(seed: int) -> None:
        torch.default_generator.manual_seed(int(seed))

    def get_rng_state(device: Any = NAME) -> torch.Tensor:
        _check_device(device)
        return torch.default_generator.get_state()

    def set_rng_state(new_state: torch.Tensor, device: Any = NAME) -> None:
        _check_device(device)
        torch.default_generator.set_state(new_state)

    for function in (
        get_amp_supported_dtype, is_available, is_initialized, _lazy_init, device_count,
        current_device, set_device, synchronize, _is_in_bad_fork, manual_seed,
        manual_seed_all, get_rng_state, set_rng_state,
    ):
        setattr(m, function.__name__, function)
    return m
