"""The jitamp:: ops on their own: schemas, opcheck, and what each cast does
compared with what eager autocast does to the same input."""
import pytest
import torch

import jitamp  # noqa: F401  (registers the ops)
import oracle

ops = torch.ops.jitamp
cuda_only = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device; none on this machine")


def region():
    """The region token a cast takes (its kernel ignores it), as a plan of
    jitamp's executors makes it (the op as saved raises outside one)."""
    return ops.autocast_caller_region_in_plan()


def _samples(device):
    x = torch.randn(3, 4, device=device, requires_grad=True)
    b = torch.randn(3, 4, device=device, dtype=torch.bfloat16)
    r = region()
    return [
        (ops.autocast_to_fp16.default, (x, "cpu,cuda", r)),
        (ops.autocast_to_fp16.optional, (x, "cpu", r)),
        (ops.autocast_to_fp16.list, ([x, b], "cpu,cuda", r)),
        (ops.autocast_to_fp32.default, (b, "cpu,cuda", r)),
        (ops.autocast_to_fp32.optional, (b, "cuda", r)),
        (ops.autocast_to_fp32.list, ([x, b], "cpu", r)),
        (ops.autocast_to_fp32.if_no_dtype, (b, "cpu,cuda", None, r)),
        (ops.autocast_promote.default, (x, b, "cpu,cuda", r)),
        (ops.autocast_promote.three, (x, b, b, "cpu", r)),
        (ops.autocast_promote.four, (b, b, b, x, "cpu", r)),
        (ops.autocast_promote.list, ([x, b], "cpu,cuda", r)),
    ]


def _opcheck_all(device, autocast_dtype):
    for enabled in (False, True):
        with torch.autocast(device, dtype=autocast_dtype, enabled=enabled):
            for op, args in _samples(device):
                torch.library.opcheck(op, args)


def test_opcheck_cpu():
    _opcheck_all("cpu", torch.bfloat16)


@cuda_only
def test_opcheck_cuda():
    _opcheck_all("cuda", torch.float16)


def test_schemas_alias_their_input():
    schema = str(ops.autocast_to_fp16.default._schema)
    assert schema == (
        "jitamp::autocast_to_fp16(Tensor(a) self, str devices, "
        "int region) -> Tensor(a)"
    )
    for name in ("autocast_enter", "autocast_exit", "autocast_cache_enabled", "prepare_loaded"):
        # (not dir(ops): torch 2.4 lists an op namespace's ops only once used)
        assert torch._C._jit_get_schemas_for_operator(f"jitamp::{name}"), name


@pytest.mark.parametrize("run", [
    lambda: ops.autocast_caller_region(),
    lambda: ops.autocast_enter.args("cpu", torch.bfloat16, True, None),
], ids=["caller_region", "enter_args"])
def test_scope_ops_as_saved_raise_outside_jitamp_plans(run):
    """The ops a rewritten (saved) graph holds run only in a function whose
    executor jitamp did not build, with TorchScript's defaults: they raise,
    naming the fix, and leave the autocast state as it was."""
    before = oracle.autocast_state()
    with pytest.raises(RuntimeError, match=r"jitamp has not configured.*jitamp::RewriteModule.*jitamp.rewrite"):
        run()
    assert oracle.autocast_state() == before


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.float64, torch.int64])
@pytest.mark.parametrize("enabled", [False, True])
def test_to_fp16_casts_as_a_lower_precision_op_does(dtype, enabled):
    """Eager's mm (lower_precision_fp on CPU) on the same input is the oracle."""
    x = torch.ones(2, 2, dtype=dtype)
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=enabled):
        cast = ops.autocast_to_fp16(x, "cpu", region())
        try:
            expected = torch.mm(x, x).dtype
        except RuntimeError:
            expected = x.dtype  # no mm kernel for this dtype: still uncast
    assert cast.dtype == expected
    if cast.dtype == x.dtype:
        assert cast.data_ptr() == x.data_ptr(), "no-op cast must alias its input"


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.float64])
@pytest.mark.parametrize("enabled", [False, True])
def test_to_fp32_casts_as_an_fp32_op_does(dtype, enabled):
    """Eager's cdist (fp32 on CPU) on the same input is the oracle."""
    x = torch.ones(2, 2, dtype=dtype)
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=enabled):
        cast = ops.autocast_to_fp32(x, "cpu", region())
        try:
            expected = torch.cdist(x, x).dtype
        except (RuntimeError, NotImplementedError):
            expected = x.dtype  # no cdist kernel for this dtype: still uncast
    assert cast.dtype == expected


def test_device_set_restricts_the_policy():
    x = torch.ones(2, 2, dtype=torch.bfloat16)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        # exp is fp32 on CUDA only, cdist on both: eager's CPU results are
        # what a cast for "cuda" and one for "cpu" must give a CPU tensor.
        cuda_only = ops.autocast_to_fp32(x, "cuda", region())
        cpu = ops.autocast_to_fp32(x, "cpu", region())
        assert cuda_only.dtype == torch.exp(x).dtype
        assert cpu.dtype == torch.cdist(x, x).dtype
    assert cuda_only.dtype != cpu.dtype, "the case must tell the two device sets apart"


def test_promote_matches_eager_cat():
    a = torch.ones(2, dtype=torch.float32)
    b = torch.ones(2, dtype=torch.bfloat16)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = ops.autocast_promote.list([a, b], "cpu", region())
        assert [t.dtype for t in out] == [torch.cat([a, b]).dtype] * 2
        out = ops.autocast_promote.list([b, b], "cpu", region())
        assert [t.dtype for t in out] == [torch.cat([b, b]).dtype] * 2


def test_promote_raises_where_eager_raises():
    h = torch.ones(2, dtype=torch.float16)
    b = torch.ones(2, dtype=torch.bfloat16)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        with pytest.raises(RuntimeError) as eager_error:
            torch.cat([h, b])
        with pytest.raises(RuntimeError) as ours:
            ops.autocast_promote.list([h, b], "cpu", region())
    assert str(eager_error.value).splitlines()[0] in str(ours.value)


def test_if_no_dtype_leaves_explicit_dtype_alone():
    """fp32_set_opt_dtype: with an explicit dtype= eager leaves the input to
    the op; without one it casts as an fp32 op (eager's cdist on CPU) does."""
    x = torch.ones(2, 2, dtype=torch.bfloat16)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        explicit = ops.autocast_to_fp32.if_no_dtype(x, "cpu", torch.bfloat16, region())
        no_dtype = ops.autocast_to_fp32.if_no_dtype(x, "cpu", None, region())
        fp32_op = torch.cdist(x, x).dtype
    assert explicit.dtype == x.dtype and explicit.data_ptr() == x.data_ptr()
    assert no_dtype.dtype == fp32_op != x.dtype


def test_weights_are_cast_once_per_region_through_eagers_cache():
    w = torch.randn(4, 4, requires_grad=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        first = ops.autocast_to_fp16(w, "cpu", region())
        second = ops.autocast_to_fp16(w, "cpu", region())
        assert first.data_ptr() == second.data_ptr()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        third = ops.autocast_to_fp16(w, "cpu", region())
    assert third.data_ptr() != first.data_ptr(), "the cache is cleared when the outermost region ends"


def test_gradient_comes_back_in_the_input_dtype():
    """As through eager's own cast (before a lower-precision mm)."""
    w = torch.randn(4, 4, requires_grad=True)
    v = w.detach().clone().requires_grad_(True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        ops.autocast_to_fp16(w, "cpu", region()).float().sum().backward()
        torch.mm(v, torch.eye(4)).float().sum().backward()
    assert w.grad.dtype == v.grad.dtype
    assert torch.equal(w.grad, v.grad)


def test_bad_devices_string_is_a_clear_error():
    with torch.autocast("cpu"):
        with pytest.raises(RuntimeError, match="devices must name 'cpu' and/or 'cuda'"):
            ops.autocast_to_fp16(torch.ones(1), "gpu", region())


@cuda_only
def test_cuda_casts():
    x = torch.ones(2, 2, device="cuda")
    with torch.autocast("cuda", dtype=torch.float16):
        assert ops.autocast_to_fp16(x, "cuda", region()).dtype == torch.mm(x, x).dtype
        # a policy for CPU only leaves a CUDA tensor alone (aliased)
        cpu_only = ops.autocast_to_fp16(x, "cpu", region())
        assert cpu_only.dtype == x.dtype and cpu_only.data_ptr() == x.data_ptr()
