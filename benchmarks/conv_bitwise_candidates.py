"""Which of torch.compile's CPU bf16 conv-net rewrites are bitwise eager autocast.

    python benchmarks/conv_bitwise_candidates.py               # sweep + timing
    python benchmarks/conv_bitwise_candidates.py --repeats 7   # faster, noisier
    python benchmarks/conv_bitwise_candidates.py --threads 2 --json out.json

Inductor's lead on CPU bf16 conv nets comes from oneDNN post-ops, channels-
last activations, prepacked weights and batch norms folded into the convs.
Per op, k/n configs torch.equal to eager autocast (torch.autocast("cpu",
dtype=torch.bfloat16), no_grad) and the max abs diff: conv2d + ReLU as
mkldnn::_convolution_pointwise with a ReLU post-op (bf16 input, weight and
bias, as autocast casts them), the same on channels-last input and weight,
conv + BN folded into the fp32 weights; 3x3/1x1, stride 1/2, batch 1/8, bias
or not. Then max_pool2d on a channels-last copy against NCHW max_pool2d over
kernel, stride, padding, dilation and ceil_mode, on inputs with +0/-0 ties
and with NaNs: bit patterns (`bits`: a zero's sign and a NaN's payload
count), torch.equal (-0 == +0, NaN != NaN) and NaN == NaN (`equal_nan`).
A candidate oneDNN cannot run on this CPU (its bf16 convolution needs
avx512bw/vl/dq or avx_ne_convert: not on AVX2-only CPUs) is reported as
`unsupported`, with the error.

Then bench_autocast.py's ConvNet, interleaved (each repeat times every
variant once, in turn), medians over repeats: eager autocast and jitamp's
frozen plan, each also with max_pool2d on a channels-last copy (ATen's NCHW
bf16 max_pool2d kernel is the slow one); ratio: median over repeats of
variant / jitamp frozen in the same repeat; `bitwise`: torch.equal with eager
autocast on 4 inputs. glibc malloc is steady by default (as bench_autocast
--malloc steady). The header names the CPU and whether it does bf16 matmul
in hardware: read the ratios with that in mind.
"""
from __future__ import annotations

import argparse, copy, itertools, json, os, pathlib, statistics, sys, time
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_autocast  # noqa: E402  (machine(), ConvNet, _frozen, _steady_malloc)

BF, CL, MK = torch.bfloat16, torch.channels_last, torch.ops.mkldnn


def compare(got: torch.Tensor, ref: torch.Tensor) -> dict:
    """torch.equal; bit patterns equal (zero signs, NaN payloads count); NaN == NaN; max abs diff."""
    nan = torch.isnan(got) & torch.isnan(ref)
    return {"equal": torch.equal(got, ref),
            "bits": torch.equal(got.contiguous().view(torch.int16), ref.contiguous().view(torch.int16)),
            "equal_nan": bool(((got == ref) | nan).all()),
            "diff": float((got.double() - ref.double()).abs().masked_fill(nan, 0).max())}


def tally(name: str, rows: list[dict], keys=("equal",)) -> dict:
    """Print and return k/n per criterion, the max abs diff, the configs failing keys[0]."""
    out = {k: sum(r[k] for r in rows) for k in keys}
    text = "  ".join(f"{k} {v}/{len(rows)}" for k, v in out.items())
    diff = max(r["diff"] for r in rows)
    print(f"  {name:<44} {text}" + (f"  max|diff| {diff:.3g}" if diff else ""))
    if 0 < len(failing := [r["cfg"] for r in rows if not r[keys[0]]]) < len(rows):
        print(f"    not {keys[0]}: " + ", ".join(failing))
    return {**out, "n": len(rows), "max_abs_diff": diff, f"not_{keys[0]}": failing}


def conv_sweep() -> dict:
    shapes = [(3, 16, 3, 1, 8, 32), (16, 32, 3, 1, 8, 32), (32, 64, 3, 1, 8, 16), (16, 32, 1, 1, 8, 32),
              (16, 32, 3, 2, 8, 32), (32, 64, 3, 1, 1, 16), (3, 16, 3, 2, 1, 32), (32, 64, 1, 2, 8, 16)]
    rows: dict[str, list] = {}
    unsupported: dict[str, str] = {}  # candidate -> the error it raises here
    for (cin, cout, k, s, n, hw), bias in itertools.product(shapes, (True, False)):
        torch.manual_seed(cin + cout + k + s + n + bias)
        x, w = torch.randn(n, cin, hw, hw), torch.randn(cout, cin, k, k) * (2 / (cin * k * k)) ** 0.5
        b = torch.randn(cout) * 0.1 if bias else None
        mean, var = torch.randn(cout) * 0.1, torch.rand(cout) + 0.5  # a trained BN, as bench_autocast._as_trained
        gamma, beta = torch.rand(cout) * 0.5 + 0.5, torch.randn(cout) * 0.1
        P, S, D = [k // 2] * 2, [s] * 2, [1, 1]
        with torch.no_grad(), torch.autocast("cpu", dtype=BF):
            ref = F.relu(F.conv2d(x, w, b, S, P))
            ref_bn = F.relu(F.batch_norm(F.conv2d(x, w, b, S, P), mean, var, gamma, beta, False, 0.1, 1e-5))
            scale = gamma * torch.rsqrt(var + 1e-5)  # the fold in fp32, as torch.jit.freeze folds
            wf, bfold = w * scale.view(-1, 1, 1, 1), ((b if bias else 0) - mean) * scale + beta
            folded = F.relu(F.conv2d(x, wf, bfold, S, P))
        xb, wb, bb = x.to(BF), w.to(BF), b.to(BF) if bias else None  # what autocast feeds the conv
        pw_relu = lambda inp, wt: MK._convolution_pointwise(inp, wt, bb, P, S, D, 1, "relu", [], None)  # noqa: E731
        cfg = f"{cin}->{cout} {k}x{k} s{s} n{n} {hw}x{hw}{' bias' if bias else ''}"
        for name, run, want in (("pointwise relu", lambda: pw_relu(xb, wb), ref),
                                ("pointwise relu, channels-last x + w", lambda: pw_relu(to_cl(xb), to_cl(wb)), ref),
                                ("conv + BN folded (fp32 fold), relu", lambda: folded, ref_bn)):
            if name in unsupported:
                continue
            try:
                got = run()
            except RuntimeError as e:
                if "cpu support" not in str(e):  # only oneDNN's "bf16 path needs the cpu support ..."
                    raise
                unsupported[name] = str(e).splitlines()[0]
                continue
            rows.setdefault(name, []).append({"cfg": cfg, **compare(got, want)})
    print(f"conv + relu vs eager autocast ({len(shapes)} shapes x bias/no bias):")
    out = {k: tally(k, v) for k, v in rows.items()}
    for name, reason in unsupported.items():
        print(f"  {name:<44} not on this CPU: {reason}")
        out[name] = {"unsupported": reason}
    return out


def to_cl(x):
    return x.contiguous(memory_format=CL)


def pool_cl(x, *args):
    return F.max_pool2d(to_cl(x), *args).contiguous()


def pool_sweep() -> dict:
    torch.manual_seed(0)
    ties, nans = torch.randn(8, 32, 17, 17).relu().to(BF), torch.randn(8, 32, 17, 17).to(BF)
    ties.view(-1)[::7] = -0.0  # ReLU's many +0, and -0 sprinkled in: ties both ways round
    nans.view(torch.int16).view(-1)[::61], nans.view(torch.int16).view(-1)[::67] = 0x7FC5, -0x3F  # 0xffc1
    rows: dict[str, list] = {"+-0 ties": [], "NaNs": []}
    nan_bits: dict[str, set] = {"NCHW": set(), "channels-last copy": set()}
    for k, s, p, ceil, d in itertools.product((2, 3), (1, 2), (0, 1), (False, True), (1, 2)):
        args, cfg = (k, s, p, d, ceil), {"cfg": f"k{k} s{s} p{p} d{d}{' ceil' if ceil else ''}"}
        rows["+-0 ties"].append({**cfg, **compare(pool_cl(ties, *args), F.max_pool2d(ties, *args))})
        got, ref = pool_cl(nans, *args), F.max_pool2d(nans, *args)
        rows["NaNs"].append({**cfg, **compare(got, ref)})
        for key, y in (("NCHW", ref), ("channels-last copy", got)):
            nan_bits[key].update(f"{v & 0xFFFF:#06x}" for v in y[torch.isnan(y)].view(torch.int16).unique().tolist())
    print(f"max_pool2d on a channels-last copy vs NCHW ({len(rows['NaNs'])} configs, k/s/p/dilation/ceil_mode):")
    out = {k: tally(k, v, ("bits", "equal", "equal_nan")) for k, v in rows.items()}
    print("    NaN bits out (in: 0x7fc5, 0xffc1): " + ", ".join(f"{k} {sorted(v)}" for k, v in nan_bits.items()))
    return {**out, "nan_bits": {k: sorted(v) for k, v in nan_bits.items()}}


class PoolCLConvNet(bench_autocast.ConvNet):
    """bench_autocast's ConvNet with its max_pool2d run on a channels-last copy."""

    def body(self, x):
        x = F.relu(self.n1(self.c1(x)))
        x = F.max_pool2d(x.contiguous(memory_format=torch.channels_last), 2).contiguous()
        x = F.relu(self.n2(self.c2(x)))
        return self.head(x.mean(dim=(2, 3)))


def time_models(repeats: int, calls: int) -> dict:
    torch.manual_seed(0)
    model = bench_autocast.ConvNet().eval()  # bench_autocast's "convnet" workload: trained BN stats, eval
    (pool_cl_model := PoolCLConvNet().eval()).load_state_dict(model.state_dict())
    variants = {"eager autocast": model, "jitamp frozen": bench_autocast._frozen(copy.deepcopy(model), True),
                "eager autocast, pool on CL copy": pool_cl_model,
                "jitamp frozen, pool on CL copy": bench_autocast._frozen(copy.deepcopy(pool_cl_model), True)}
    samples: dict[str, list] = {k: [] for k in variants}
    with torch.no_grad():
        inputs = [torch.randn(8, 3, 32, 32) * (1 + i) for i in range(4)]  # (also warm-up calls)
        bitwise = {k: all(torch.equal(f(x), model(x)) for x in inputs) for k, f in variants.items()}
        x = inputs[0]
        for _ in range(repeats):
            for k, f in variants.items():
                start = time.perf_counter()
                for _ in range(calls):
                    f(x)
                samples[k].append((time.perf_counter() - start) / calls)
    print(f"convnet [8, 3, 32, 32], no_grad: median of {repeats} interleaved repeats x {calls} calls")
    out = {}
    for k, ts in samples.items():
        ratio = statistics.median(t / b for t, b in zip(ts, samples["jitamp frozen"]))
        out[k] = {"us": statistics.median(ts) * 1e6, "ratio_vs_jitamp_frozen": ratio, "bitwise": bitwise[k]}
        print(f"  {k:<34} {out[k]['us']:8.0f} us  x{ratio:5.2f} vs jitamp frozen  "
              f"{'bitwise' if bitwise[k] else 'NOT bitwise'}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=21)
    ap.add_argument("--calls", type=int, default=20, help="calls per timed sample")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--malloc", choices=("default", "steady"), default="steady")
    ap.add_argument("--json", metavar="PATH", help="also write the results and machine info as JSON")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.malloc == "steady":
        bench_autocast._steady_malloc()
    info = bench_autocast.machine()
    print(f"{info['cpu']} ({info['cores']} cores; avx512_bf16 {info['avx512_bf16']}, AMX {info['amx_bf16']}: bf16 "
          f"matmul {info['bf16_matmul']}), torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"{args.malloc} malloc")
    report = {"machine": info, "torch": torch.__version__, "threads": torch.get_num_threads(),
              "malloc": args.malloc, "conv": conv_sweep(), "max_pool2d": pool_sweep(),
              "convnet": time_models(args.repeats, args.calls)}
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
