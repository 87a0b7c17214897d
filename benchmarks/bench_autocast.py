"""jitamp against eager autocast and PyTorch's built-in JIT autocast.

    python benchmarks/bench_autocast.py            # full run, prints a table
    python benchmarks/bench_autocast.py --quick    # fewer repeats
    python benchmarks/bench_autocast.py --json out.json
    python benchmarks/bench_autocast.py --inference-only   # no_grad runs, frozen variants
    python benchmarks/bench_autocast.py --device cuda --dtype float16   # (or bfloat16) on a GPU

Everything runs in one process, interleaved (each repeat times every variant
once, in turn, each repeat starting one variant further along), and reports
medians over repeats. Per workload and variant:
time per call, ratio against eager autocast and against the built-in JIT
autocast (each ratio is paired: the median over repeats of the two times
taken in the same repeat, which a host whose speed drifts over seconds
shifts far less than a ratio of two medians), and columns that do not depend on the machine: real cast copies
(aten::_to_copy) per call, the elements they copy (`cast_elements`) and
the ATen ops run (`aten_ops`, nested ones included); and the largest difference from eager
autocast's output. The header and the JSON (`machine`) name the CPU and
whether it does bf16 matmul in hardware (AMX, avx512_bf16) or emulates it:
read a ratio with that in mind. Inference runs also time frozen
models (torch.jit.freeze, with and without jitamp; jitamp.freeze(...,
standalone=True) where it applies, on CPU), `ratio_vs_best`: time over the best of
eager autocast and the built-in (for frozen variants, the built-in's frozen
model too), and
`ratio_vs_eager_hand_cast`: time over eager autocast of a copy whose weights
are stored in the dtype eager casts them to (the floor for casting weights
once). Where a workload has it (tiny_matmuls50), `script_explicit_casts` is
the floor of any exact plan: the computation without a scope, eager's casts
written out as `.to()` calls, scripted without autocast and run on
TorchScript's simple executor (so its gradients are eager's), and
`ratio_vs_script_explicit_casts` the distance to it. `ratio_vs_best_exact`
counts only baselines whose output (and, with backward, every gradient) is
bitwise eager autocast's. `--threads N` sets
torch's thread count.

`--compile` adds `torch_compile` to inference runs: torch.compile (Inductor)
of eager autocast, with the seconds its first call took compiling
(`compile_s`) and its difference from eager (Inductor fuses and reorders:
not bitwise in general).

`--aoti` adds, to inference runs, the ways out of TorchScript compiled
ahead of time: AOTInductor of the program jitamp.export makes of the
jitamp-scripted model (`jitamp_export_aoti`: regions kept;
`jitamp_export_aoti_explicit`: explicit casts), AOTInductor of
torch.export.export of the eager model (`eager_export_aoti`, the anchor:
`ratio_vs_eager_export_aoti` for every variant, and the AOTInductor
variants' `max_abs_diff_vs_eager_export_aoti`), and torch.compile as
--compile does. `export_s` is the export's seconds, `compile_s`
AOTInductor's (compiling and packaging) and loading.

`--malloc steady` keeps glibc's malloc from handing memory back to the
kernel (no mmap for large blocks, no trimming), as a caching allocator
(jemalloc, tcmalloc, CUDA's) would. With glibc's defaults a tensor of more
than a few hundred KB may live in pages freshly mapped and zeroed at every
call, and which variant's tensors do depends on the process's allocation
history: whole-call differences of 10-20% between variants running the same
kernels (docs/lab-notes.md, glibc's malloc).

`--instructions` counts instead of timing: the chosen workloads'
variants in one process run under valgrind's callgrind, the instructions
each executes per call (`--calls` per count; `--keep DIR` keeps
callgrind's files for `callgrind_annotate`). Counts do not drift with the
host, and the overhead's is the same on any x86-64 CPU for one build of
torch; the kernels' depend on the CPU's ISA (bf16 matmul emulated on AVX2
takes many more), and an instruction is no time (per_op_cost.py's
docstring).

Then the rewrite cost of jitamp's pass against the built-in pass on graphs
of growing size.
"""
from __future__ import annotations

import argparse
import copy
import ctypes
import ctypes.util
import gc
import importlib.util
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import torch
from torch import nn
import torch.nn.functional as F

import jitamp

warnings.filterwarnings("ignore", category=DeprecationWarning)

DEVICE = "cpu"  # set by --device / --dtype before any module is made
DTYPE = torch.bfloat16
COMPILE = False  # --compile: a torch.compile (Inductor) variant of inference runs
AOTI = False  # --aoti: AOTInductor variants of inference runs (and torch.compile)


# --- workloads -----------------------------------------------------------
# Each module computes `body` and runs it in a scope in `forward`, so that
# eager fp32 (body), eager autocast (body inside torch.autocast), and the
# scripted variants (forward) compute the same thing. The scope's device type
# and dtype are module constants (TorchScript reads no Python globals), taken
# from DEVICE / DTYPE when the module is made: constants in the graph, so
# frozen models cast their weights once.


class Scoped(nn.Module):
    __constants__ = ["device_type", "amp_dtype"]

    def __init__(self):
        super().__init__()
        self.device_type, self.amp_dtype = DEVICE, DTYPE


class MLP(Scoped):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(256, 1024), nn.Linear(1024, 256)
        self.norm = nn.LayerNorm(256)

    def body(self, x):
        return self.norm(self.fc2(F.gelu(self.fc1(x))))

    def forward(self, x):
        with torch.autocast(self.device_type, dtype=self.amp_dtype):
            y = self.norm(self.fc2(F.gelu(self.fc1(x))))
        return y


class EncoderBlock(Scoped):
    """Self-attention + MLP written with plain ops (no nn.MultiheadAttention)."""

    __constants__ = Scoped.__constants__ + ["sdpa"]

    def __init__(self, width: int = 256, heads: int = 4, sdpa: bool = False):
        super().__init__()
        self.heads, self.sdpa = heads, sdpa
        self.qkv = nn.Parameter(torch.randn(3 * width, width) * width**-0.5)
        self.proj = nn.Parameter(torch.randn(width, width) * width**-0.5)
        self.w1 = nn.Parameter(torch.randn(4 * width, width) * width**-0.5)
        self.w2 = nn.Parameter(torch.randn(width, 4 * width) * (4 * width) ** -0.5)
        self.g1, self.b1 = nn.Parameter(torch.ones(width)), nn.Parameter(torch.zeros(width))
        self.g2, self.b2 = nn.Parameter(torch.ones(width)), nn.Parameter(torch.zeros(width))

    def body(self, x):
        b, s, w = x.shape
        h = F.layer_norm(x, [w], self.g1, self.b1)
        q, k, v = F.linear(h, self.qkv).chunk(3, dim=-1)
        q = q.reshape(b, s, self.heads, w // self.heads).transpose(1, 2)
        k = k.reshape(b, s, self.heads, w // self.heads).transpose(1, 2)
        v = v.reshape(b, s, self.heads, w // self.heads).transpose(1, 2)
        if self.sdpa:
            o = F.scaled_dot_product_attention(q, k, v)
        else:
            att = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(w // self.heads), dim=-1)
            o = torch.matmul(att, v)
        o = o.transpose(1, 2).reshape(b, s, w)
        x = x + F.linear(o, self.proj)
        h = F.layer_norm(x, [w], self.g2, self.b2)
        return x + F.linear(F.gelu(F.linear(h, self.w1)), self.w2)

    def forward(self, x):
        with torch.autocast(self.device_type, dtype=self.amp_dtype):
            y = self.body(x)
        return y


class ConvNet(Scoped):
    """Biased convs + BatchNorm (the built-in pass fails on biased convs)."""

    def __init__(self, width: int = 32):
        super().__init__()
        self.c1, self.n1 = nn.Conv2d(3, width, 3, padding=1, bias=True), nn.BatchNorm2d(width)
        self.c2, self.n2 = nn.Conv2d(width, 2 * width, 3, padding=1, bias=True), nn.BatchNorm2d(2 * width)
        self.head = nn.Linear(2 * width, 10)
        _as_trained(self)

    def body(self, x):
        x = F.relu(self.n1(self.c1(x)))
        x = F.relu(self.n2(self.c2(F.max_pool2d(x, 2))))
        return self.head(x.mean(dim=(2, 3)))

    def forward(self, x):
        with torch.autocast(self.device_type, dtype=self.amp_dtype):
            y = self.body(x)
        return y


class GRULoop(Scoped):
    def __init__(self, width: int = 128):
        super().__init__()
        self.cell = nn.GRUCell(width, width)

    def body(self, xs):
        h = torch.zeros(xs.size(1), self.cell.hidden_size, dtype=xs.dtype, device=xs.device)
        for t in range(32):
            h = self.cell(xs[t], h)
        return h

    def forward(self, xs):
        with torch.autocast(self.device_type, dtype=self.amp_dtype):
            h = self.body(xs)
        return h


class TinyMatmuls(Scoped):
    def __init__(self, size: int = 8):
        super().__init__()
        self.w = nn.Parameter(torch.randn(size, size) * size**-0.5)

    def body(self, x):
        for _ in range(50):
            x = torch.mm(x, self.w)
        return x

    def forward(self, x):
        with torch.autocast(self.device_type, dtype=self.amp_dtype):
            y = self.body(x)
        return y


class TinyMatmulsExplicitCasts(Scoped):
    """TinyMatmuls without a scope, eager autocast's casts written out: x's,
    and w's once a call (eager's cast cache holds a leaf's cast that
    requires grad until the region ends). Scripted without autocast, it runs
    what any exact plan must run and nothing else (no autocast key, no cast
    op where nothing is cast): the floor. Shares the module's w, so its
    gradients land where the other variants' do."""

    __constants__ = Scoped.__constants__ + ["steps"]

    def __init__(self, of: TinyMatmuls):
        super().__init__()
        self.w = of.w
        # a loop over a constant tuple: the front end unrolls it, as
        # jitamp's plan unrolls TinyMatmuls's (the simple executor unrolls
        # nothing, and a loop costs about 800 instructions a trip)
        self.steps = tuple(range(50))

    def forward(self, x):
        x = x.to(self.amp_dtype)
        w = self.w.to(self.amp_dtype)
        for _ in self.steps:
            x = torch.mm(x, w)
        return x


class ResidualBlock(nn.Module):
    def __init__(self, width: int, hidden: int):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.up, self.down = nn.Linear(width, hidden), nn.Linear(hidden, width)

    def forward(self, x):
        return x + self.down(F.gelu(self.up(self.norm(x))))


class ResidualMLP(Scoped):
    """Pre-norm residual MLP, 4 x (512 -> 2048 -> 512): wide enough that the
    weight copies leave the allocator's recycled memory, where eager's cast
    cache costs most under torch.no_grad()."""

    def __init__(self, width: int = 512, hidden: int = 2048, depth: int = 4):
        super().__init__()
        self.blocks = nn.Sequential(*[ResidualBlock(width, hidden) for _ in range(depth)])

    def body(self, x):
        return self.blocks(x)

    def forward(self, x):
        with torch.autocast(self.device_type, dtype=self.amp_dtype):
            y = self.body(x)
        return y


class Bottleneck(nn.Module):
    """ResNet-50's bottleneck block (torchvision's layout, v1.5: stride on the 3x3)."""

    def __init__(self, inplanes: int, planes: int, stride: int = 1):
        super().__init__()
        width, out = planes, planes * 4
        self.conv1, self.bn1 = nn.Conv2d(inplanes, width, 1, bias=False), nn.BatchNorm2d(width)
        self.conv2, self.bn2 = nn.Conv2d(width, width, 3, stride, 1, bias=False), nn.BatchNorm2d(width)
        self.conv3, self.bn3 = nn.Conv2d(width, out, 1, bias=False), nn.BatchNorm2d(out)
        self.downsample = (
            nn.Sequential(nn.Conv2d(inplanes, out, 1, stride, bias=False), nn.BatchNorm2d(out))
            if stride != 1 or inplanes != out else nn.Identity())

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = F.relu(self.bn2(self.conv2(y)))
        return F.relu(self.bn3(self.conv3(y)) + self.downsample(x))


class ResNet50(Scoped):
    """ResNet-50's shape (stem, 3-4-6-3 bottlenecks, 1000-way head), written
    here so the benchmark needs no torchvision; eval mode (running BN stats)."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                                  nn.MaxPool2d(3, 2, 1))
        layers, inplanes = [], 64
        for planes, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
            for i in range(blocks):
                layers.append(Bottleneck(inplanes, planes, stride if i == 0 else 1))
                inplanes = planes * 4
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(2048, 1000)
        _as_trained(self)

    def body(self, x):
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(self.layers(self.stem(x)), 1), 1))

    def forward(self, x):
        with torch.autocast(self.device_type, dtype=self.amp_dtype):
            y = self.body(x)
        return y


class MLPNoScope(MLP):
    """The MLP without a scope: what jitamp costs code run without autocast."""

    def forward(self, x):
        return self.norm(self.fc2(F.gelu(self.fc1(x))))


@dataclass
class Workload:
    name: str
    make: Callable[[], nn.Module]
    inputs: Callable[[], tuple]
    backward: bool = True
    autocast_off: bool = False  # compare scripted with/without jitamp, no autocast
    iters: int = 1
    # the module's computation with eager autocast's casts written out and
    # no scope, scripted without autocast (`script_explicit_casts`): the
    # floor of any exact plan, where one is written
    explicit_casts: Callable[[nn.Module], nn.Module] | None = None


def _as_trained(module: nn.Module) -> None:
    """Running statistics and affine parameters of every batch norm as a
    trained model has them, not the identity a fresh one starts as (a
    fold of the norm into the conv before it is then not exact by luck)."""
    g = torch.Generator().manual_seed(1)
    for m in module.modules():
        if isinstance(m, nn.BatchNorm2d):
            n = m.num_features
            with torch.no_grad():
                m.running_mean.copy_(torch.randn(n, generator=g) * 0.1)
                m.running_var.copy_(torch.rand(n, generator=g) + 0.5)
                m.weight.copy_(torch.rand(n, generator=g) * 0.5 + 0.5)
                m.bias.copy_(torch.randn(n, generator=g) * 0.1)


def _randn(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, device=DEVICE)


def workloads() -> list[Workload]:
    """The workloads at the sizes of DEVICE: small ones on a 2-core CPU, the
    sizes of the CUDA measurements in the issue tracker on a GPU."""
    if DEVICE == "cuda":
        return [
            Workload("mlp", lambda: ResidualMLP(1024, 4096, 4), lambda: (_randn(256, 1024),), iters=5),
            Workload("encoder_block", lambda: EncoderBlock(1024, 16), lambda: (_randn(16, 256, 1024),)),
            Workload("sdpa_encoder_block", lambda: EncoderBlock(1024, 16, sdpa=True),
                     lambda: (_randn(16, 256, 1024),), backward=False),
            Workload("convnet", lambda: ConvNet(64).eval(), lambda: (_randn(32, 3, 128, 128),)),
            Workload("resnet50", lambda: ResNet50().eval(), lambda: (_randn(32, 3, 224, 224),), backward=False),
            Workload("gru_loop32", lambda: GRULoop(512), lambda: (_randn(32, 64, 512),)),
            Workload("tiny_matmuls50", lambda: TinyMatmuls(16), lambda: (_randn(16, 16),), iters=5,
                     explicit_casts=TinyMatmulsExplicitCasts),
            Workload("mlp_autocast_off", MLPNoScope, lambda: (_randn(64, 256),), autocast_off=True, iters=5),
        ]
    return [
        Workload("mlp", MLP, lambda: (_randn(64, 256),), iters=5),
        Workload("residual_mlp_2048", ResidualMLP, lambda: (_randn(64, 512),)),
        # the frozen-inference floor: 3 x (384 -> 1024 -> 384), batch 64
        Workload("residual_mlp_384", lambda: ResidualMLP(384, 1024, 3), lambda: (_randn(64, 384),),
                 backward=False),
        Workload("encoder_block", EncoderBlock, lambda: (_randn(8, 128, 256),)),
        Workload("sdpa_encoder_block", lambda: EncoderBlock(sdpa=True), lambda: (_randn(8, 128, 256),),
                 backward=False),
        Workload("convnet", lambda: ConvNet().eval(), lambda: (_randn(8, 3, 32, 32),)),
        Workload("resnet50", lambda: ResNet50().eval(), lambda: (_randn(1, 3, 224, 224),), backward=False),
        Workload("gru_loop32", GRULoop, lambda: (_randn(32, 16, 128),)),
        # batch 1 through 2048-wide layers: a weight's cast costs more than
        # its matmul on every CPU (AMX or emulated bf16 alike), so casts and
        # per-op overhead show
        Workload("wide_linear_b1", lambda: ResidualMLP(2048, 2048, 2), lambda: (_randn(1, 2048),),
                 backward=False),
        Workload("tiny_matmuls50", TinyMatmuls, lambda: (_randn(8, 8),), iters=5,
                 explicit_casts=TinyMatmulsExplicitCasts),
        Workload("mlp_autocast_off", MLPNoScope, lambda: (_randn(64, 256),), autocast_off=True, iters=5),
    ]


# --- variants ------------------------------------------------------------


def _script(module: nn.Module, with_jitamp: bool, profiling_executor: bool = False) -> Any:
    jitamp.disable()
    if with_jitamp:
        with jitamp.enable(profiling_executor=profiling_executor):
            return torch.jit.script(module)
    torch._C._jit_set_autocast_mode(True)
    return torch.jit.script(module)


def _on_simple_executor(scripted: Any, inputs: tuple) -> Any:
    """`scripted` with its plan made now (at its first call) by TorchScript's
    simple executor, as jitamp's are: each op's gradient is eager's (the
    profiling executor's symbolic autodiff sums some in low precision)."""
    profiling = torch._C._jit_set_profiling_mode(False)
    try:
        with torch.no_grad():
            scripted(*inputs)
    finally:
        torch._C._jit_set_profiling_mode(profiling)
    return scripted


def _frozen(module: nn.Module, with_jitamp: bool) -> Any:
    """torch.jit.freeze of an eval copy, scripted with or without jitamp
    (with jitamp, the casts of weights under a static scope are done once)."""
    return torch.jit.freeze(_script(module, with_jitamp=with_jitamp).eval())


def _compiled(eager_autocast: Callable[..., Any], inputs: tuple) -> Callable[..., Any]:
    """torch.compile (Inductor) of eager autocast, compiled now on `inputs`
    under torch.no_grad(); the seconds it took are its `compile_s`."""
    compiled = torch.compile(eager_autocast)
    start = time.perf_counter()
    try:
        with torch.no_grad():
            compiled(*inputs)
    except Exception as error:
        return _failed(error)
    compiled.compile_s = time.perf_counter() - start  # type: ignore[attr-defined]
    return compiled


def _aoti_compiled(export: Callable[[], torch.export.ExportedProgram]) -> Callable[..., Any]:
    """The program `export()` makes (under torch.no_grad()), compiled by
    AOTInductor into a package and loaded; with the seconds the export took
    (`export_s`) and the compile, packaging and load (`compile_s`)."""
    try:
        start = time.perf_counter()
        with torch.no_grad():
            program = export()
        exported = time.perf_counter()
        with tempfile.TemporaryDirectory() as folder:
            package = torch._inductor.aoti_compile_and_package(
                program, package_path=os.path.join(folder, "model.pt2"))
            loaded = torch._inductor.aoti_load_package(package)
    except Exception as error:
        return _failed(error)

    def compiled(*args):
        return loaded(*args)
    compiled.export_s = exported - start  # type: ignore[attr-defined]
    compiled.compile_s = time.perf_counter() - exported  # type: ignore[attr-defined]
    return compiled


def make_variants(w: Workload, module: nn.Module, inputs: tuple, backward: bool = True) -> dict[str, Callable[..., Any]]:
    if w.autocast_off:
        plain = _script(module, with_jitamp=False)
        ours = _script(module, with_jitamp=True)
        profiling = _script(module, with_jitamp=True, profiling_executor=True)
        return {"eager_fp32": module.body, "script_plain": plain, "jitamp": ours,
                "jitamp_profiling": profiling}

    def eager_autocast(*args):
        with torch.autocast(DEVICE, dtype=DTYPE):
            return module.body(*args)

    variants: dict[str, Callable[..., Any]] = {"eager_fp32": module.body, "eager_autocast": eager_autocast}
    try:
        variants["builtin_jit"] = _script(module, with_jitamp=False)
    except Exception as error:  # the built-in fails on some models
        variants["builtin_jit"] = _failed(error)
    if w.explicit_casts is not None:  # no scope: nothing for an autocast pass to do
        variants["script_explicit_casts"] = _on_simple_executor(
            _script(w.explicit_casts(module), with_jitamp=False), inputs)
    variants["jitamp"] = _script(module, with_jitamp=True)
    # jitamp.enable(profiling_executor=True): TorchScript's profile-guided
    # optimizations and symbolic autodiff (not eager-exact in backward).
    variants["jitamp_profiling"] = _script(module, with_jitamp=True, profiling_executor=True)
    if (COMPILE or AOTI) and not backward:
        variants["torch_compile"] = _compiled(eager_autocast, inputs)
    if AOTI and not backward:
        variants["eager_export_aoti"] = _aoti_compiled(lambda: torch.export.export(module, inputs))
        variants["jitamp_export_aoti"] = _aoti_compiled(
            lambda: jitamp.export(_script(module, with_jitamp=True), inputs))
        variants["jitamp_export_aoti_explicit"] = _aoti_compiled(
            lambda: jitamp.export(_script(module, with_jitamp=True), inputs, explicit_casts=True))
    if DEVICE == "cuda":  # where TorchScript's fuser runs: its plan with jitamp's fusible casts
        variants["jitamp_profiling_fused_casts"] = _with_fuser_casts(
            _script(module, with_jitamp=True, profiling_executor=True))
    if not backward:  # frozen for inference, under torch.no_grad()
        # the floor for casting weights once: eager autocast on a copy whose
        # weights are already in the dtype eager casts them to
        variants["eager_hand_cast"] = _hand_cast(module, inputs)
        try:
            variants["builtin_jit_frozen"] = _frozen(module, with_jitamp=False)
        except Exception as error:
            variants["builtin_jit_frozen"] = _failed(error)
        variants["jitamp_frozen"] = _frozen(module, with_jitamp=True)
        if DEVICE == "cpu":  # a standalone model holds the casts of CPU scopes only
            # no jitamp op left (exact for callers whose autocast is off)
            try:
                variants["jitamp_standalone"] = jitamp.freeze(
                    _script(module, with_jitamp=True).eval(), standalone=True)
            except ValueError as error:  # says which op or scope needs jitamp
                variants["jitamp_standalone"] = _failed(RuntimeError(str(error).splitlines()[1].strip()))
    return variants


class _CastRecorder(torch.utils._python_dispatch.TorchDispatchMode):
    """Records the storage of every tensor cast to DTYPE (aten::_to_copy)."""

    def __init__(self):
        super().__init__()
        self.cast: set[int] = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.ops.aten._to_copy.default and kwargs.get("dtype") == DTYPE:
            self.cast.add(args[0].untyped_storage().data_ptr())
        return func(*args, **kwargs)


def _hand_cast(module: nn.Module, inputs: tuple) -> Callable[..., Any]:
    """Eager autocast on a copy of `module` whose parameters that eager
    autocast casts to DTYPE (found by running it once on `inputs`) are stored in DTYPE:
    what a model with its weights cast once costs, without any compiler."""
    copied = copy.deepcopy(module)
    with torch.no_grad(), _CastRecorder() as recorder, torch.autocast(DEVICE, dtype=DTYPE):
        copied.body(*inputs)
    for name, p in list(copied.named_parameters()):
        if p.untyped_storage().data_ptr() in recorder.cast:
            owner, _, attr = name.rpartition(".")
            setattr(copied.get_submodule(owner), attr,
                    nn.Parameter(p.detach().to(DTYPE), requires_grad=False))

    def hand_cast(*args):
        with torch.autocast(DEVICE, dtype=DTYPE):
            return copied.body(*args)
    return hand_cast


def _with_fuser_casts(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` with jitamp's static casts shown to the TensorExpr fuser while
    its plan is made (expose_static_casts_to_fuser.h, opt-in): the fusion the pass adds."""
    def call(*args):
        previous = jitamp._C.set_fuser_casts_enabled(True)
        try:
            return fn(*args)
        finally:
            jitamp._C.set_fuser_casts_enabled(previous)
    return call


def _failed(error: BaseException) -> Callable[..., Any]:
    def fail(*args):
        raise RuntimeError(str(error).strip().splitlines()[0])

    fail.failure = str(error).strip().splitlines()[0]  # type: ignore[attr-defined]
    return fail


def _step(fn, inputs, backward: bool, module: nn.Module):
    if not backward:
        with torch.no_grad():
            return fn(*inputs)
    for p in module.parameters():
        p.grad = None
    out = fn(*inputs)
    out.float().sum().backward()
    return out


def _warm_up(fn, inputs, backward: bool, module: nn.Module):
    """The profiling runs and the optimized plan's first calls, before a
    variant is timed or counted; the last step's output."""
    for _ in range(12):
        out = _step(fn, inputs, backward, module)
    return out


def _sync() -> None:
    if DEVICE == "cuda":
        torch.cuda.synchronize()


# variants whose weights are cast once, compared with the built-in's frozen model
_FROZEN = frozenset({"eager_hand_cast", "builtin_jit_frozen", "jitamp_frozen", "jitamp_standalone"})


def _bitwise_eager(row: dict[str, Any], reference: str) -> bool:
    return (row.get("max_abs_diff_vs_" + reference, 0.0) == 0.0
            and row.get("grad_max_abs_diff_vs_" + reference, 0.0) == 0.0)


def _steady_malloc() -> None:
    """glibc malloc without mmap for large blocks and without trimming the
    heap: freed memory stays in the process, as in a caching allocator."""
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    m_trim_threshold, m_mmap_max = -1, -4  # malloc.h
    if not (hasattr(libc, "mallopt") and libc.mallopt(m_mmap_max, 0) == 1
            and libc.mallopt(m_trim_threshold, 2**31 - 1) == 1):
        raise SystemExit("--malloc steady: this C library has no glibc mallopt")


def _max_abs_diff(ours: list[torch.Tensor], reference: list[torch.Tensor]) -> float:
    if len(ours) != len(reference):
        return math.inf
    return max((float((a.double() - b.double()).abs().max()) for a, b in zip(ours, reference)), default=0.0)


def _count_per_call(fn, inputs, backward, module) -> dict[str, int]:
    """Hardware-independent columns of one call, eager's or a script's, from
    the profiler: real dtype casts (aten::_to_copy), the elements they copy,
    and the ATen ops run (nested ones included)."""
    with torch.autograd.profiler.profile(use_kineto=False, record_shapes=True) as prof:
        _step(fn, inputs, backward, module)
    casts = [e for e in prof.function_events if e.name == "aten::_to_copy"]
    return {"cast_copies": len(casts),
            "cast_elements": sum(math.prod(e.input_shapes[0]) if e.input_shapes and e.input_shapes[0] else 1
                                 for e in casts),
            "aten_ops": sum(1 for e in prof.function_events if e.name.startswith("aten::"))}


def run_workload(w: Workload, repeats: int, backward: bool) -> dict[str, Any]:
    torch.manual_seed(0)
    module = w.make().to(DEVICE)
    inputs = w.inputs()
    variants = make_variants(w, module, inputs, backward)
    results: dict[str, Any] = {}
    live: dict[str, Callable] = {}
    for name, fn in variants.items():
        try:
            out = _warm_up(fn, inputs, backward, module)
            live[name] = fn
            results[name] = {"times": [], "out": out.detach()}
            if backward:  # the gradients this variant's last step left
                results[name]["grads"] = [p.grad.detach().clone() for p in module.parameters()
                                          if p.grad is not None]
        except Exception as error:
            # a TorchScript traceback ends with the error it reports
            lines = [line for line in str(error).strip().splitlines() if line.strip()] or [type(error).__name__]
            results[name] = {"failed": lines[-1].strip()[:120]}
    for repeat in range(repeats):
        for name, fn in rotated(live, repeat):  # interleaved
            _sync()
            start = time.perf_counter()
            for _ in range(w.iters):
                _step(fn, inputs, backward, module)
            _sync()
            results[name]["times"].append((time.perf_counter() - start) / w.iters)
    times = {name: r["times"] for name, r in results.items() if "times" in r}
    reference = "script_plain" if w.autocast_off else "eager_autocast"
    ref_out = results.get(reference, {}).get("out")
    summary = {}
    for name, r in results.items():
        if "failed" in r:
            summary[name] = {"failed": r["failed"]}
            continue
        row = {"median_us": statistics.median(r["times"]) * 1e6}
        row.update(_count_per_call(variants[name], inputs, backward, module))
        for seconds in ("export_s", "compile_s"):
            if hasattr(variants[name], seconds):
                row[seconds] = getattr(variants[name], seconds)
        if ref_out is not None:
            row["max_abs_diff_vs_" + reference] = float((r["out"].double() - ref_out.double()).abs().max())
        aoti_out = results.get("eager_export_aoti", {}).get("out")
        if aoti_out is not None and name.endswith(("_aoti", "_aoti_explicit")):
            # what AOTInductor makes of eager's own export: the bits to match
            row["max_abs_diff_vs_eager_export_aoti"] = float((r["out"].double() - aoti_out.double()).abs().max())
        ref_grads = results.get(reference, {}).get("grads")
        if ref_grads is not None and "grads" in r:
            # a baseline that is fast because it computes other gradients
            # (the built-in's symbolic autodiff sums some in low precision)
            # shows it here
            row["grad_max_abs_diff_vs_" + reference] = _max_abs_diff(r["grads"], ref_grads)
        summary[name] = row
    for name, row in summary.items():
        if "median_us" not in row:
            continue
        bases = [b for b in (reference, "builtin_jit", "builtin_jit_frozen")
                 if b in summary and "median_us" in summary[b]]
        for base in bases:
            row[f"ratio_vs_{base}"] = paired_ratio(times[name], [times[base]])
        # the floors: weights cast once by hand (frozen plans); eager's casts
        # written out, no autocast at all (any exact plan); AOTInductor of
        # eager's own export (the ahead-of-time compiled ones)
        for floor in ("eager_hand_cast", "script_explicit_casts", "eager_export_aoti"):
            if "median_us" in summary.get(floor, {}):
                row[f"ratio_vs_{floor}"] = paired_ratio(times[name], [times[floor]])
        # the target: <= 0.95 x the best of eager autocast and the built-in,
        # and for a frozen model, of the built-in's frozen model too
        best = [b for b in bases if b != "builtin_jit_frozen" or name in _FROZEN]
        if not w.autocast_off and best:
            row["ratio_vs_best"] = paired_ratio(times[name], [times[b] for b in best])
            exact = [b for b in best if _bitwise_eager(summary[b], reference)]
            if exact != best and exact:
                row["ratio_vs_best_exact"] = paired_ratio(times[name], [times[b] for b in exact])
    for name, row in summary.items():
        if name in times:
            row["times_us"] = [t * 1e6 for t in times[name]]
    return summary


def rotated(variants: dict[str, Any], repeat: int) -> list[tuple[str, Any]]:
    """The variants in the order repeat `repeat` times them: each repeat
    starts one further along. In a fixed order the place a variant takes
    moves its paired ratio: 3-4% on a 2-core AMD EPYC (one 4x4 mm,
    jitamp / built-in: 0.97-0.98 with the built-in first, 1.02 with jitamp
    first; docs/lab-notes.md, 2026-11-29); rotated, every pair is timed in
    both orders as often."""
    items = list(variants.items())
    k = repeat % len(items) if items else 0
    return items[k:] + items[:k]


def paired_ratio(times: list[float], bases: list[list[float]]) -> float:
    """The median over repeats of a variant's time over the fastest of
    `bases` in the same repeat. The repeats are interleaved, so both times
    of a pair were taken seconds apart: a host whose speed drifts (a shared
    machine: 2x over tens of seconds, docs/lab-notes.md) moves both."""
    return statistics.median(t / min(base[i] for base in bases) for i, t in enumerate(times))


# --- instructions (callgrind) ---------------------------------------------

# Set in the process valgrind's callgrind runs (instructions_per_call): its
# counts go to this directory.
CALLGRIND_DIR = "JITAMP_BENCH_CALLGRIND_DIR"


def _callgrind_control(*options: str) -> None:
    """Switches instrumentation on or off (-i on, -i off), zeroes (-z) or
    dumps (-d) this process's counters; returns once callgrind has done it.
    (Its output is dropped, not read: reading it
    runs a loop whose length depends on the timing, and its instructions
    are counted.)"""
    subprocess.run(["callgrind_control", *options, str(os.getpid())], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class CallgrindCounter:
    """In the process callgrind runs: each count() a dump of the
    instructions its calls executed (the Python loop and call included),
    in order.json's order. The zero and dump themselves cost more the first
    times they run (Python 3.11 on specializes the bytecode it runs often):
    after a warm-up, the median of three with no call between them is what
    every count holds besides its calls ("(zero and dump)").

    Callgrind runs with instrumentation off (--instr-atstart=no), and each
    count switches it on before its zero and off after its dump: what runs
    between counts (importing torch, scripting, warming up) runs several
    times faster, and what a count holds is the same."""

    def __init__(self, out_dir: str):
        self.out_dir, self.order = out_dir, []
        for _ in range(10):
            self.count("(warm-up)", lambda: None, 0)
        for _ in range(3):
            self.count("(zero and dump)", lambda: None, 0)

    def count(self, label: str, call: Callable[[], Any], calls: int) -> None:
        # Python's collector runs when allocations reach a threshold, so
        # wherever it falls: off while counting (tens of thousands of
        # instructions in one count and not in the next)
        gc.collect()
        gc.disable()
        try:
            _callgrind_control("-i", "on")
            _callgrind_control("-z")
            for _ in range(calls):
                call()
            _callgrind_control("-d")
            _callgrind_control("-i", "off")
        finally:
            gc.enable()
        self.order.append(label)

    def close(self) -> None:
        with open(os.path.join(self.out_dir, "order.json"), "w") as f:
            json.dump(self.order, f)


def _callgrind_summary(path: str) -> int:
    """The instructions a callgrind file counts (its `summary:` line)."""
    with open(path) as f:
        for line in f:
            if line.startswith("summary:"):
                return int(line.split()[1])
    raise RuntimeError(f"{path}: no summary line")


def instructions_per_call(script: str, argv: list[str], calls: int, keep: str | None = None) -> dict[str, float]:
    """Runs `script argv` under valgrind's callgrind, with CALLGRIND_DIR set
    (the script counts with CallgrindCounter, `calls` calls per count), and
    returns each count's instructions per call, the zero and dump
    subtracted. `keep`: a directory for callgrind's files (one per count,
    named in order.json), for `callgrind_annotate --inclusive=yes`."""
    valgrind = shutil.which("valgrind")
    if valgrind is None or shutil.which("callgrind_control") is None:
        raise SystemExit("--instructions needs valgrind (callgrind and callgrind_control) on PATH")
    out_dir = keep or tempfile.mkdtemp(prefix="jitamp_callgrind_")
    os.makedirs(out_dir, exist_ok=True)
    for name in os.listdir(out_dir):
        if name.startswith("callgrind.out") or name == "order.json":
            os.remove(os.path.join(out_dir, name))
    proc = subprocess.run(
        [valgrind, "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={os.path.join(out_dir, 'callgrind.out')}",
         sys.executable, os.path.abspath(script), *argv],
        env={**os.environ, CALLGRIND_DIR: out_dir}, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"callgrind's run failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    with open(os.path.join(out_dir, "order.json")) as f:
        order = json.load(f)
    counts = [(label, _callgrind_summary(os.path.join(out_dir, f"callgrind.out.{i + 1}")))
              for i, label in enumerate(order)]
    if keep is None:
        shutil.rmtree(out_dir)
    zero_and_dump = statistics.median(count for label, count in counts if label == "(zero and dump)")
    return {label: (count - zero_and_dump) / calls for label, count in counts if not label.startswith("(")}


def _count_workloads(chosen: list[Workload], inference_only: bool, calls: int, out_dir: str) -> None:
    """--instructions, in the process callgrind runs: every variant of every
    chosen workload, warmed up as run_workload warms it up, counted."""
    counter = CallgrindCounter(out_dir)
    for w in chosen:
        for backward in ([False, True] if w.backward and not inference_only else [False]):
            torch.manual_seed(0)
            module = w.make().to(DEVICE)
            inputs = w.inputs()
            for name, fn in make_variants(w, module, inputs, backward).items():
                try:
                    _warm_up(fn, inputs, backward, module)
                except Exception:  # run_workload reports the failure
                    continue
                counter.count(f"{w.name}/{'fwd+bwd' if backward else 'inference'}/{name}",
                              lambda: _step(fn, inputs, backward, module), calls)
    counter.close()


def _report_instructions(per_call: dict[str, float]) -> dict[str, dict[str, dict[str, float]]]:
    """--instructions' rows: per workload and mode, each variant's
    instructions per call and its ratios to the bases' counts."""
    report: dict[str, dict[str, dict[str, float]]] = {}
    for label, ir in per_call.items():
        key, name = label.rsplit("/", 1)
        report.setdefault(key, {})[name] = {"ir_per_call": ir}
    for key, rows in report.items():
        print(f"\n{key}")
        for name, row in rows.items():
            for base in ("script_plain", "eager_autocast", "builtin_jit", "builtin_jit_frozen",
                         "script_explicit_casts"):
                if base in rows and base != name:
                    row[f"ratio_vs_{base}"] = row["ir_per_call"] / rows[base]["ir_per_call"]
            extras = "  ".join(f"{k}={_fmt(v)}" for k, v in row.items() if k != "ir_per_call")
            print(f"  {name:15s} {row['ir_per_call']:12.0f} instructions  {extras}")
    return report


# --- pass cost -----------------------------------------------------------


def _chain_source(n_ops: int, shared_weight: bool) -> str:
    """One scope holding n_ops ops: mm then relu, repeated.

    shared_weight=False: each mm multiplies the running value by itself, so
    every value has a couple of uses, as in a real network's graph.
    shared_weight=True: every mm reads the same argument `w` (n_ops/2 uses of
    one value): TorchScript's IR keeps a value's uses in a vector, and
    redirecting one use costs a search through it, so any pass that casts
    each use grows quadratically here (the built-in pass too).
    """
    body = "x = torch.relu(torch.mm(x, w))" if shared_weight else "x = torch.relu(torch.mm(x, x))"
    lines = ["import torch", "", "def chain(x, w):", '    with torch.autocast("cpu", dtype=torch.bfloat16):']
    lines += [f"        {body}"] * (n_ops // 2)
    lines += ["    return x", ""]
    return "\n".join(lines)


def pass_cost(sizes: list[int], shared_weight: bool = False, repeats: int = 3) -> list[dict[str, Any]]:
    rows = []
    tmp = tempfile.mkdtemp()
    for n in sizes:
        name = f"chain_{'shared' if shared_weight else 'fresh'}_{n}"
        path = os.path.join(tmp, f"{name}.py")
        with open(path, "w") as f:
            f.write(_chain_source(n, shared_weight))
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        spec.loader.exec_module(mod)
        jitamp.disable()
        graph = torch.jit.script(mod.chain).graph.copy()
        # The built-in pass needs the autocast object's __init__ inlined (as
        # the executor does before running it); time both on the same graph.
        torch._C._jit_pass_inline(graph)
        nodes = sum(1 for _ in graph.nodes())
        ours, builtin, copies = [], [], []
        for _ in range(repeats):
            start = time.perf_counter()
            g = graph.copy()
            copies.append(time.perf_counter() - start)
            start = time.perf_counter()
            jitamp.rewrite_graph(g)
            ours.append(time.perf_counter() - start)
            g = graph.copy()
            prev = torch._C._jit_set_autocast_mode(True)
            start = time.perf_counter()
            torch._C._jit_pass_autocast(g)
            builtin.append(time.perf_counter() - start)
            torch._C._jit_set_autocast_mode(prev)
        rows.append({
            "ops": n,
            "nodes": nodes,
            "jitamp_us_per_node": min(ours) / nodes * 1e6,
            "builtin_us_per_node": min(builtin) / nodes * 1e6,
            # Reference: Graph::copy, a linear-time walk of the same graph.
            "graph_copy_us_per_node": min(copies) / nodes * 1e6,
            "jitamp_s": min(ours),
            "builtin_s": min(builtin),
            "graph_copy_s": min(copies),
        })
    if len(rows) >= 2:
        a, b = rows[0], rows[-1]
        for key in ("jitamp", "builtin", "graph_copy"):
            exponent = math.log(b[f"{key}_s"] / a[f"{key}_s"]) / math.log(b["nodes"] / a["nodes"])
            for r in rows:
                r[f"{key}_growth_exponent"] = exponent
    return rows


# --- report --------------------------------------------------------------


def machine() -> dict[str, Any]:
    """What the ratios depend on: the CPU and whether it does bf16 matmul in
    hardware (AMX, avx512_bf16) or emulates it (AVX2 only: bf16 matmul and
    conv take most of each call there and hide cast and overhead costs)."""
    info: dict[str, Any] = {"cpu": "unknown", "amx_bf16": False, "avx512_bf16": False, "avx2": False,
                            "cores": os.cpu_count()}
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
    except OSError:
        return info
    flags: set[str] = set()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name" and info["cpu"] == "unknown":
            info["cpu"] = value.strip()
        elif key.strip() == "flags" and not flags:
            flags = set(value.split())
    for flag in ("amx_bf16", "avx512_bf16", "avx2"):
        info[flag] = flag in flags
    info["bf16_matmul"] = ("hardware (AMX)" if info["amx_bf16"] else "hardware (avx512_bf16)"
                           if info["avx512_bf16"] else "emulated")
    if DEVICE == "cuda":
        info["gpu"] = torch.cuda.get_device_name()
    return info


def _fmt(x: Any) -> str:
    return f"{x:.3g}" if isinstance(x, float) else str(x)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--quick", action="store_true", help="5 repeats, small pass-cost graphs")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--only", metavar="NAME", help="run one workload")
    parser.add_argument("--inference-only", action="store_true",
                        help="only the torch.no_grad() runs (with the frozen variants), no pass cost")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--dtype", choices=("bfloat16", "float16"), default=None,
                        help="the autocast dtype (default: bfloat16 on cpu, float16 on cuda)")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch.set_num_threads (the issue's frozen floor is measured with 1; --instructions: 1 by default)")
    parser.add_argument("--compile", action="store_true",
                        help="also torch.compile (Inductor) of eager autocast in inference runs, with its "
                        "compile time (compile_s) and its difference from eager")
    parser.add_argument("--aoti", action="store_true",
                        help="also AOTInductor of jitamp.export's programs and of the eager model's "
                        "torch.export, and torch.compile, in inference runs, with export and compile times")
    parser.add_argument("--malloc", choices=("default", "steady"), default="default",
                        help="steady: glibc malloc keeps freed memory (no fresh pages per call)")
    parser.add_argument("--instructions", action="store_true",
                        help="count the instructions per call under valgrind's callgrind instead of timing "
                        "(the workloads and variants chosen; no pass cost)")
    parser.add_argument("--calls", type=int, default=20, help="with --instructions: calls per count")
    parser.add_argument("--keep", metavar="DIR", help="with --instructions: keep callgrind's files in DIR")
    args = parser.parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: torch.cuda.is_available() is False here")
    global DEVICE, DTYPE, COMPILE, AOTI
    COMPILE, AOTI = args.compile, args.aoti
    DEVICE = args.device
    DTYPE = getattr(torch, args.dtype or ("float16" if DEVICE == "cuda" else "bfloat16"))
    repeats = 5 if args.quick else args.repeats
    # counting: one thread unless told (idle worker threads spin, and
    # callgrind counts their spinning)
    counting = args.instructions or bool(os.environ.get(CALLGRIND_DIR))
    torch.set_num_threads(args.threads or (1 if counting else max(1, torch.get_num_threads())))
    if args.malloc == "steady":
        _steady_malloc()
    host = machine()
    report: dict[str, Any] = {"torch": torch.__version__, "device": DEVICE, "dtype": str(DTYPE),
                              "threads": torch.get_num_threads(), "malloc": args.malloc, "repeats": repeats,
                              "machine": host, "workloads": {}}
    print(f"{host['cpu']} ({host['cores']} cores; bf16 matmul {host['bf16_matmul']})"
          + (f", {host['gpu']}" if "gpu" in host else ""))
    print(f"torch {torch.__version__}, {DEVICE} {DTYPE}, {torch.get_num_threads()} threads, {args.malloc} malloc, "
          + (f"instructions per call (valgrind's callgrind, {args.calls} calls per count)" if args.instructions
             else f"median of {repeats} interleaved repeats"))
    chosen = [w for w in workloads() if not args.only or w.name == args.only]
    if not chosen:
        parser.error(f"--only {args.only}: no such workload ({', '.join(w.name for w in workloads())})")
    if os.environ.get(CALLGRIND_DIR):
        _count_workloads(chosen, args.inference_only, args.calls, os.environ[CALLGRIND_DIR])
        return 0
    if args.instructions:
        report["measure"] = "instructions per call (callgrind)"
        report["workloads"] = _report_instructions(instructions_per_call(
            __file__, [a for a in (argv if argv is not None else sys.argv[1:]) if a != "--instructions"],
            args.calls, args.keep))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(report, f, indent=2)
        return 0
    for w in chosen:
        for backward in ([False, True] if w.backward and not args.inference_only else [False]):
            key = f"{w.name}/{'fwd+bwd' if backward else 'inference'}"
            summary = run_workload(w, repeats, backward)
            report["workloads"][key] = summary
            print(f"\n{key}")
            for name, row in summary.items():
                if "failed" in row:
                    print(f"  {name:28s} FAILED: {row['failed']}")
                    continue
                extras = "  ".join(f"{k}={_fmt(v)}" for k, v in row.items() if k not in ("median_us", "times_us"))
                print(f"  {name:28s} {row['median_us']:10.1f} us  {extras}")
    sizes = [200, 600, 2000] if args.quick else [2000, 6000, 20000]
    for shared in (False, True) if not (args.only or args.inference_only) else ():
        key = "pass_cost_shared_weight" if shared else "pass_cost"
        report[key] = pass_cost(sizes, shared_weight=shared)
        title = "one value used by every mm (stress)" if shared else "each value used by the next op"
        print(f"\npass cost, one scope of n ops, {title}")
        for r in report[key]:
            print("  " + "  ".join(f"{k}={_fmt(v)}" for k, v in r.items()))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
