"""Frozen models pool in channels-last layout (passes/pool_channels_last.h,
ops/frozen_kernels.h): jitamp::max_pool2d returns aten::max_pool2d's bits,
strides and errors for every input, and a frozen model jitamp rewrote runs
it in place of aten::max_pool2d (docs/frozen.md, "Max-pooling in
channels-last layout")."""
import itertools

import pytest
import torch
import torch.nn.functional as F
from torch import Tensor, nn

import jitamp
import oracle
from oracle import check_against_eager, cpu_autocast, torchscript_deprecation_ignored

BITS = {torch.bfloat16: torch.int16, torch.float16: torch.int16, torch.float32: torch.int32,
        torch.float64: torch.int64}

# kernel, stride, padding, dilation, ceil_mode (padding at most half the
# kernel, as ATen requires)
CONFIGS = [(k, s, p, d, c)
           for k, s, p, d, c in itertools.product((1, 2, 3), (None, 1, 2), (0, 1), (1, 2), (False, True))
           if p <= k // 2]


def special_values(shape, dtype) -> Tensor:
    """Normal values with +-0 ties, infinities and NaNs of both signs and
    of other payloads (a maximum is one of its window's elements: which
    one, and each NaN's bits, are what could differ)."""
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(sum(shape)))
    x[x.abs() < 0.4] = 0.0
    x[x.abs() > 2.5] = float("inf")
    x = x.to(dtype)
    flat = x.view(-1)
    flat[1::9] = -0.0
    flat[3::29] = -float("inf")
    bits = flat.view(BITS[dtype])
    if dtype == torch.float32:
        nans = (0x7fc00000, -4194304, 0x7f800001)  # quiet, x86's default, signalling
    elif dtype == torch.float64:
        nans = (0x7ff8000000000000, -2251799813685248)
    else:
        nans = (0x7e00, -512, 0x7d01) if dtype == torch.float16 else (0x7fc0, -64, 0x7f81)
    for start, nan in zip((5, 13, 21), nans):
        bits[start::41] = nan
    return x


def assert_same_bits(got: Tensor, expected: Tensor, what: str) -> None:
    assert got.dtype == expected.dtype and got.shape == expected.shape, what
    assert got.stride() == expected.stride(), (what, got.stride(), expected.stride())
    assert torch.equal(got.view(BITS[got.dtype]), expected.view(BITS[expected.dtype])), what


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32, torch.float64],
                         ids=str)
@pytest.mark.parametrize("channels", [1, 5, 16, 37])
def test_kernel_returns_eagers_bits(dtype, channels):
    """Every pooling of the sweep, on channel counts the channels-last
    kernel vectorizes (16), runs element by element (1, 5) or both (37)."""
    x = special_values((2, channels, 11, 13), dtype)
    for k, s, p, d, c in CONFIGS:
        args = (k, s if s is not None else [], p, d, c)
        assert_same_bits(torch.ops.jitamp.max_pool2d(x, *args), F.max_pool2d(x, *args),
                         f"{dtype} C={channels} kernel={k} stride={s} padding={p} dilation={d} ceil={c}")


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32], ids=str)
@pytest.mark.parametrize("threads", [1, 2])
def test_layout_copies_move_every_element(dtype, threads):
    """The op's own NCHW <-> channels-last copies (blocks of 8x8 or 4x4
    in 64x64 tiles, the edges one by one, images and bands of rows split
    between threads): channel and pixel counts below, at and across a
    block and a tile, an input that starts inside its storage; a 1x1
    window returns the input itself, a 2x2 one copies a smaller result
    back."""
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        for channels, height, width in [(3, 5, 7), (8, 8, 8), (9, 4, 4), (63, 9, 7), (64, 8, 8),
                                        (65, 11, 13), (130, 6, 22), (32, 32, 32)]:
            x = special_values((4, channels, height, width), dtype)[1:]  # storage offset
            for window in (1, 2):
                assert_same_bits(torch.ops.jitamp.max_pool2d(x, [window, window]), F.max_pool2d(x, window),
                                 f"{dtype} {tuple(x.shape)} window {window} threads {threads}")
    finally:
        torch.set_num_threads(previous)


def test_a_window_of_the_whole_input_keeps_eagers_strides():
    """A 1x1 result is both NCHW- and channels-last-contiguous: it comes
    back with eager's strides, which later ops (a conv) read as NCHW."""
    x = special_values((4, 32, 6, 6), torch.bfloat16)
    expected = F.max_pool2d(x, 6)
    got = torch.ops.jitamp.max_pool2d(x, [6, 6])
    assert_same_bits(got, expected, "global")
    w = torch.randn(8, 32, 1, 1).bfloat16()
    assert torch.equal(F.conv2d(got, w).view(torch.int16), F.conv2d(expected, w).view(torch.int16))


@pytest.mark.parametrize("layout", ["channels_last", "transposed", "unbatched", "mkldnn"])
def test_other_inputs_are_eagers_own_call(layout):
    """An input the channels-last copy does not serve goes to
    aten::max_pool2d itself."""
    x = special_values((2, 16, 8, 8), torch.bfloat16 if layout != "mkldnn" else torch.float32)
    x = {"channels_last": lambda: x.contiguous(memory_format=torch.channels_last),
         "transposed": lambda: x.transpose(2, 3),
         "unbatched": lambda: x[0],
         "mkldnn": lambda: x.to_mkldnn()}[layout]()
    expected = F.max_pool2d(x, 2)
    got = torch.ops.jitamp.max_pool2d(x, [2, 2])
    if layout == "mkldnn":
        assert got.is_mkldnn
        got, expected = got.to_dense(), expected.to_dense()
    assert_same_bits(got, expected, layout)


def test_an_empty_batch_pools_as_eager():
    x = torch.empty(0, 16, 8, 8, dtype=torch.bfloat16)
    assert_same_bits(torch.ops.jitamp.max_pool2d(x, [2, 2]), F.max_pool2d(x, 2), "empty")


def test_bad_arguments_raise_eagers_errors():
    x = torch.randn(2, 16, 8, 8).bfloat16()
    for args in (([2, 2], [], [2, 2]), ([0, 2],), ([2, 2], [1, 1], [0, 0], [0, 1])):
        with pytest.raises(RuntimeError) as expected:
            F.max_pool2d(x, *args)
        with pytest.raises(RuntimeError) as got:
            torch.ops.jitamp.max_pool2d(x, *args)
        assert str(got.value) == str(expected.value)


def test_a_recorded_call_has_eagers_gradient():
    """With autograd recording, eager's own call (its backward sums a
    gradient of overlapping windows in eager's order)."""
    x = special_values((2, 16, 8, 8), torch.float32).nan_to_num().requires_grad_()
    g = torch.randn(2, 16, 7, 7)
    expected, = torch.autograd.grad(F.max_pool2d(x, 2, 1), x, g)
    got, = torch.autograd.grad(torch.ops.jitamp.max_pool2d(x, [2, 2], [1, 1]), x, g)
    assert torch.equal(got, expected)


class PoolNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, 3, padding=1)
        self.conv2 = nn.Conv2d(32, 16, 3, padding=1)
        self.head = nn.Linear(16, 5)

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = F.max_pool2d(torch.relu(self.conv1(x)), 3, 2, 1)
            y = F.max_pool2d(self.conv2(y), 2, ceil_mode=True)
            return self.head(y.flatten(1).mean(1, keepdim=True).expand(-1, 16))


def kinds(graph) -> list:
    """The kinds of the nodes of `graph` and of its blocks."""
    found = []

    def walk(block) -> None:
        for node in block.nodes():
            found.append(node.kind())
            for inner in node.blocks():
                walk(inner)

    walk(graph)
    return found


@pytest.mark.parametrize("how", ["freeze", "jitamp.freeze", "optimize_for_inference", "saved"])
def test_frozen_model_pools_in_channels_last_as_eager(how, tmp_path):
    torch.manual_seed(0)
    model = PoolNet().eval()
    scripted = oracle.script(model)
    with torchscript_deprecation_ignored():
        if how == "jitamp.freeze":
            frozen = jitamp.freeze(scripted)
        elif how == "optimize_for_inference":
            frozen = torch.jit.optimize_for_inference(scripted)
        else:
            frozen = torch.jit.freeze(scripted)
        if how == "saved":
            torch.jit.save(frozen, tmp_path / "frozen.pt")
            frozen = torch.jit.load(tmp_path / "frozen.pt")
    assert kinds(frozen.graph).count("jitamp::max_pool2d") == 2, frozen.graph
    assert "aten::max_pool2d" not in kinds(frozen.graph)
    x = torch.randn(2, 3, 9, 9)
    x[0, 0, 0, :3] = float("nan")
    for outer in (None, cpu_autocast(torch.bfloat16), cpu_autocast(enabled=False)):
        with torch.no_grad():
            check_against_eager(model, (x,), scripted=frozen, outer=outer, grad=False)
        check_against_eager(model, (x,), scripted=frozen, outer=outer, grad=False)


def test_standalone_and_unfrozen_models_keep_atens_pool():
    """A standalone frozen model loads without jitamp (no jitamp op), and
    an unfrozen model's plan is not a frozen one."""
    torch.manual_seed(0)
    scripted = oracle.script(PoolNet().eval())
    with torchscript_deprecation_ignored():
        standalone = jitamp.freeze(scripted, standalone=True)
    assert kinds(standalone.graph).count("aten::max_pool2d") == 2
    assert "jitamp::max_pool2d" not in kinds(scripted.graph)


def _pools(x: Tensor, flag: bool) -> Tensor:
    if flag:
        x = F.max_pool2d(x, 2, 1, 1)
    return F.max_pool2d(x, 2)


class PoolOnly(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        return F.max_pool2d(torch.relu(x), 2)


def test_a_frozen_model_without_jitamps_ops_keeps_atens_pool():
    """A frozen model none of whose methods needs jitamp's ops (no scope,
    no cast) keeps aten::max_pool2d: it still loads without jitamp."""
    scripted = oracle.script(PoolOnly().eval())
    with torchscript_deprecation_ignored():
        frozen = torch.jit.freeze(scripted)
    assert not any(kind.startswith("jitamp::") for kind in kinds(frozen.graph)), frozen.graph
    assert kinds(frozen.graph).count("aten::max_pool2d") == 1


def test_the_pass_alone_and_idempotent():
    graph = oracle.script_without_jitamp(_pools).graph
    torch._C._jit_pass_inline(graph)  # F.max_pool2d is a call
    assert jitamp.passes.run("pool_channels_last", graph)
    assert kinds(graph).count("jitamp::max_pool2d") == 2
    assert not jitamp.passes.run("pool_channels_last", graph)
