"""Where the microseconds of small ops go (issue 40): a chain of 50 `torch.mm` of 4x4
tensors in a loop, one thread, under torch.no_grad(), medians of
interleaved repeats, each variant against the same function scripted
without any autocast.

    python benchmarks/per_op_cost.py [--repeats 31] [--dtype bfloat16|float32] [--json out.json]
    python benchmarks/per_op_cost.py --instructions [--calls 100] [--keep DIR]

Variants:
  plain             scripted, no scope (the floor)
  plain_in_region   the same, called inside an eager torch.autocast region:
                    what the AutocastCPU dispatch key costs each op
  jitamp_no_scope   the same function (no scope) scripted with jitamp: what
                    the rewrite adds where autocast is off (the loop's two
                    out-of-line flags, repairs/keep_loops_out_of_line.h; w's
                    cast hoisted before the loop)
  jitamp            a scope around the loop, scripted with jitamp
  jitamp_through_kernel  the same, each mm dispatched to its autocast kernel
                    (jitamp._C.set_direct_calls_enabled(False)): what
                    jitamp::direct_call saves
  builtin           the same, scripted by PyTorch's built-in JIT autocast
  eager_autocast    the Python loop under eager autocast
  jitamp_suspended  jitamp's scope with autocast suspended around the loop
                    (jitamp::suspend_autocast / resume_autocast): a run of
                    ops that skips the autocast key, toggled once
  jitamp_suspended_casts  ... with an explicit cast op before each mm (the
                    built-in's aten::_autocast_to_reduced_precision): what a
                    run without the key costs once its casts are explicit
  jitamp_toggled    ... suspended around each op: toggling per op
  jitamp_empty_scope / plain_empty: a scope with nothing in it, and a
                    function with nothing in it: what entering and leaving
                    a scope costs
Per-op costs are (variant - floor) / 50; ratios are paired (the median over
repeats of the two times taken in the same repeat: bench_autocast.paired_ratio). The machine is named (bench_autocast.machine()).

--instructions counts instead of timing: the same variants, in one process
run under valgrind's callgrind, each called --calls times between a zero
and a dump of the counters (callgrind_control), give the instructions
executed per call (the Python call included, the same for every variant;
the counters' own zero and dump, measured with no call between them,
subtracted; bench_autocast.instructions_per_call). A count does not drift
with the host, and the overhead's (the interpreter's, the dispatcher's,
jitamp's ops') is the same on any x86-64 CPU for one build of torch: it
decides what a time cannot on a shared machine. It weighs every
instruction alike (a cache miss, a TLS lookup, a lock count as one), so
it is no time; and the kernels' own instructions depend on the CPU's ISA
(oneDNN's, the emulated bf16 matmul's on AVX2): a small part for 4x4
matmuls. `--keep DIR` keeps callgrind's files (one per variant, in
`order.json`): `callgrind_annotate --inclusive=yes DIR/callgrind.out.N`
says where a variant's instructions go, function by function.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import warnings

import torch

import jitamp

warnings.filterwarnings("ignore", category=DeprecationWarning)
warnings.filterwarnings("ignore", category=FutureWarning)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_autocast import (CALLGRIND_DIR, CallgrindCounter, instructions_per_call,  # noqa: E402
                            machine, paired_ratio, rotated)

N = 50

SOURCE = '''
import torch
from typing import List


def plain(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    y = x
    for _ in range(50):
        y = torch.mm(y, w)
    return y


def scoped(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    y = x
    with torch.autocast("cpu", dtype=torch.bfloat16):
        for _ in range(50):
            y = torch.mm(y, w)
    return y


def suspended(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    y = x
    with torch.autocast("cpu", dtype=torch.bfloat16):
        s = torch.ops.jitamp.suspend_autocast()
        for _ in range(50):
            y = torch.mm(y, w)
        torch.ops.jitamp.resume_autocast(s)
    return y


def suspended_with_casts(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    y = x
    with torch.autocast("cpu", dtype=torch.bfloat16):
        s = torch.ops.jitamp.suspend_autocast()
        for _ in range(50):
            y = torch.mm(y._autocast_to_reduced_precision(False, True, torch.float16, torch.bfloat16),
                         w._autocast_to_reduced_precision(False, True, torch.float16, torch.bfloat16))
        torch.ops.jitamp.resume_autocast(s)
    return y


def toggled(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    y = x
    with torch.autocast("cpu", dtype=torch.bfloat16):
        for _ in range(50):
            s = torch.ops.jitamp.suspend_autocast()
            y = torch.mm(y, w)
            torch.ops.jitamp.resume_autocast(s)
    return y


def empty(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return x


def empty_scope(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        pass
    return x
'''


def _load_source():
    """The functions above as a module (TorchScript reads their source)."""
    import importlib.util
    import tempfile

    path = os.path.join(tempfile.mkdtemp(prefix="per_op_cost_"), "per_op_functions.py")
    with open(path, "w") as f:
        f.write(SOURCE)
    spec = importlib.util.spec_from_file_location("per_op_functions", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def variants():
    src = _load_source()

    def script(fn, with_jitamp):
        if with_jitamp:
            with jitamp.enable():
                return torch.jit.script(fn)
        torch._C._jit_set_autocast_mode(True)
        return torch.jit.script(fn)

    plain = script(src.plain, False)

    def in_region(x, w):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return plain(x, w)

    def eager(x, w):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return src.plain(x, w)

    def through_kernel(fn):
        # jitamp's plan with each mm dispatched to its autocast kernel, as
        # before jitamp::direct_call (the flag is read when the plan is built)
        previous = jitamp._C.set_direct_calls_enabled(False)
        try:
            scripted = script(fn, True)
            scripted(torch.ones(4, 4), torch.ones(4, 4))
        finally:
            jitamp._C.set_direct_calls_enabled(previous)
        return scripted

    return {
        "plain": plain,
        "plain_in_region": in_region,
        "jitamp_no_scope": script(src.plain, True),
        "jitamp": script(src.scoped, True),
        "jitamp_through_kernel": through_kernel(src.scoped),
        "builtin": script(src.scoped, False),
        "eager_autocast": eager,
        "jitamp_suspended": script(src.suspended, True),
        "jitamp_suspended_casts": script(src.suspended_with_casts, True),
        "jitamp_toggled": script(src.toggled, True),
        "plain_empty": script(src.empty, False),
        "jitamp_empty_scope": script(src.empty_scope, True),
    }


def inputs(dtype: str):
    """The chain's input and weight: 4x4 in `dtype`, the weight the
    identity (a chain that stays finite)."""
    return torch.randn(4, 4).to(getattr(torch, dtype)), torch.eye(4, dtype=getattr(torch, dtype))


def _warm_up(fns: dict, x, w) -> None:
    """The profiling runs and each plan's first calls, before timing or
    counting (under torch.no_grad(), as they run then)."""
    for fn in fns.values():
        for _ in range(20):
            fn(x, w)


def _count_under_callgrind(calls: int, dtype: str, out_dir: str) -> None:
    """--instructions, in the process callgrind runs: each variant, warmed
    up as for timing, counted (bench_autocast.CallgrindCounter)."""
    torch.set_num_threads(1)
    x, w = inputs(dtype)
    fns = variants()
    with torch.no_grad():
        _warm_up(fns, x, w)
        counter = CallgrindCounter(out_dir)
        for name, fn in fns.items():
            counter.count(name, lambda: fn(x, w), calls)
    counter.close()


def count_instructions(calls: int, dtype: str, keep: str | None) -> dict:
    """Instructions per call of each variant (see the module's docstring):
    {"ir_per_call": ..., "over_plain_per_op": ..., "ratio_vs_builtin": ...}."""
    per_call = instructions_per_call(__file__, ["--calls", str(calls), "--dtype", dtype], calls, keep)
    rows = {}
    for name, ir in per_call.items():
        base = per_call["plain_empty"] if name == "jitamp_empty_scope" else per_call["plain"]
        rows[name] = {"ir_per_call": ir,
                      "over_plain" + ("_per_scope" if name == "jitamp_empty_scope" else "_per_op"):
                          (ir - base) / (1 if name == "jitamp_empty_scope" else N),
                      "ratio_vs_builtin": ir / per_call["builtin"]}
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=31)
    parser.add_argument("--calls", type=int, help="calls per timing (200) or per count (100)")
    parser.add_argument("--dtype", choices=("bfloat16", "float32"), default="bfloat16",
                        help="the inputs' dtype: bfloat16 (no cast runs) or float32 (casts run)")
    parser.add_argument("--json", metavar="PATH")
    parser.add_argument("--instructions", action="store_true",
                        help="count instructions per call under valgrind's callgrind instead of timing")
    parser.add_argument("--keep", metavar="DIR", help="with --instructions: keep callgrind's files in DIR")
    args = parser.parse_args(argv)
    if os.environ.get(CALLGRIND_DIR):
        _count_under_callgrind(args.calls or 100, args.dtype, os.environ[CALLGRIND_DIR])
        return 0
    if args.instructions:
        return _report_instructions(args)
    args.calls = args.calls or 200
    torch.set_num_threads(1)
    x, w = inputs(args.dtype)
    fns = variants()
    times: dict[str, list[float]] = {name: [] for name in fns}
    with torch.no_grad():
        _warm_up(fns, x, w)
        for repeat in range(args.repeats):
            for name, fn in rotated(fns, repeat):  # interleaved
                start = time.perf_counter()
                for _ in range(args.calls):
                    fn(x, w)
                times[name].append((time.perf_counter() - start) / args.calls * 1e6)
    medians = {name: statistics.median(t) for name, t in times.items()}
    host = machine()
    print(f"{host['cpu']} ({host['cores']} cores; bf16 matmul {host['bf16_matmul']}), torch {torch.__version__}, "
          f"1 thread, {args.dtype} inputs, no_grad, median of {args.repeats} x {args.calls} calls")
    floor = medians["plain"]
    rows = {}
    for name, us in medians.items():
        base = medians["plain_empty"] if name == "jitamp_empty_scope" else floor
        per_op = (us - base) / (1 if name == "jitamp_empty_scope" else N)
        vs_eager = paired_ratio(times[name], [times["eager_autocast"]])
        vs_builtin = paired_ratio(times[name], [times["builtin"]])
        rows[name] = {"us_per_call": us, "ratio_vs_eager_autocast": vs_eager, "ratio_vs_builtin": vs_builtin,
                      "extra_us" + ("_per_scope" if name == "jitamp_empty_scope" else "_per_op"): per_op}
        extra = "per scope" if name == "jitamp_empty_scope" else "per op vs plain"
        print(f"  {name:24s} {us:8.2f} us   x{vs_eager:.3f} eager   x{vs_builtin:.3f} built-in   "
              f"{per_op:+.3f} us {extra}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": host, "torch": torch.__version__, "dtype": args.dtype, "rows": rows}, f, indent=2)
    return 0



def _report_instructions(args) -> int:
    calls = args.calls or 100
    rows = count_instructions(calls, args.dtype, args.keep)
    host = machine()
    print(f"{host['cpu']}, torch {torch.__version__}, {args.dtype} inputs, no_grad, "
          f"instructions per call (callgrind, {calls} calls)")
    for name, row in rows.items():
        extra = next(k for k in row if k.startswith("over_plain"))
        print(f"  {name:24s} {row['ir_per_call']:10.0f}   x{row['ratio_vs_builtin']:.3f} built-in   "
              f"{row[extra]:+8.1f} {'per scope' if extra.endswith('scope') else 'per op vs plain'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": host, "torch": torch.__version__, "dtype": args.dtype, "calls": calls,
                       "measure": "instructions per call (callgrind)", "rows": rows}, f, indent=2)
    return 0

if __name__ == "__main__":
    sys.exit(main())
