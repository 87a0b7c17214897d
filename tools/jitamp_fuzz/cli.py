"""`python tools/jitamp_fuzz` (from a jitamp checkout; jitamp installed):
generate, run and compare programs at scale (docs/fuzzing.md).

    python tools/jitamp_fuzz --count 10000 --seed 1 --jobs 2 --out fuzz_out
    python tools/jitamp_fuzz --seed 1 --index 67 --out fuzz_out   # one program

A batch runs in worker processes (`--jobs`), each restarted every
`--restart-every` programs (TorchScript's compilation units only grow). A
worker that dies or hangs costs the program it was running (reported as
"crash"/"hang") and is replaced. Failing programs are shrunk (in a worker
process each) and written as `OUT/repro_<seed>_<index>.py`: the shrunk
program plus a main that prints eager against scripted and exits 1 while it
still fails.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time

# What a worker process runs: this package's folder (its __main__.py), from
# any working directory.
FUZZER = os.path.dirname(os.path.abspath(__file__))


def _deterministic_kernels_on(device: str | None) -> None:
    """A GPU's programs run its deterministic kernels (eager's and the
    scripted side's alike): an op that sums with atomics (index_add,
    scatter_add, some backwards) may round differently from call to call,
    and the comparison is bitwise."""
    if device is None or device == "cpu":
        return
    import torch
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True, warn_only=True)


def _worker(args) -> int:
    """Runs programs [start, stop) and prints one JSON line per program."""
    import warnings
    warnings.simplefilter("ignore")
    import torch
    torch.set_num_threads(1)
    _deterministic_kernels_on(args.device)
    from .generator import generate
    from .runner import run_source
    if args.export:
        from .export import run_export_source as run_source
    directory = tempfile.mkdtemp(prefix="jitamp_fuzz_")
    # The JSON lines go to stdout's file; whatever else writes to stdout
    # (a program, torch's C++ code) goes where stderr goes.
    sys.stdout.flush()
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    for i in range(args.start, args.stop):
        print(json.dumps({"start": i}), file=out, flush=True)
        program = generate(args.seed, i, save_share=args.save_share, device=args.device)
        result = run_source(program.render(), directory)
        print(json.dumps({"i": i, "kind": result.kind, "message": result.message[:4000],
                          "eager_raised": result.eager_raised,
                          "features": sorted(program.features)}), file=out, flush=True)
    return 0


def _reader(proc, q, wid):
    for line in proc.stdout:
        q.put((wid, line))
    q.put((wid, None))


def run_batch(seed: int, start: int, count: int, jobs: int, *, save_share: float,
              restart_every: int, timeout: float, progress: bool = True, device: str | None = None,
              budget: float | None = None, export: bool = False) -> dict:
    chunks = collections.deque(
        (a, min(a + restart_every, start + count)) for a in range(start, start + count, restart_every))
    q: queue.Queue = queue.Queue()
    workers: dict[int, dict] = {}
    results: dict[int, dict] = {}
    t0 = time.monotonic()
    next_id = [0]
    last_report = [t0]

    def launch(a, b):
        cmd = [sys.executable, FUZZER, "--worker", "--seed", str(seed), "--start", str(a),
               "--stop", str(b), "--save-share", str(save_share)] + (["--device", device] if device else []) + (
                   ["--export"] if export else [])
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        wid = next_id[0]
        next_id[0] += 1
        workers[wid] = {"proc": proc, "range": (a, b), "current": None, "since": time.monotonic()}
        threading.Thread(target=_reader, args=(proc, q, wid), daemon=True).start()

    def finish(wid, kind):
        w = workers.pop(wid)
        a, b = w["range"]
        cur = w["current"]
        if cur is not None and cur not in results:
            results[cur] = {"i": cur, "kind": kind, "message": f"worker {kind} (rc {w['proc'].poll()})",
                            "eager_raised": False, "features": []}
            if cur + 1 < b:
                chunks.appendleft((cur + 1, b))

    while chunks or workers:
        if budget is not None and time.monotonic() - t0 > budget:
            # out of time: the programs finished count, those running do not
            for w in workers.values():
                w["proc"].kill()
                w["proc"].wait()
            break
        while chunks and len(workers) < jobs:
            launch(*chunks.popleft())
        try:
            wid, line = q.get(timeout=1.0)
        except queue.Empty:
            wid, line = None, None
        now = time.monotonic()
        if wid is not None and wid in workers:
            w = workers[wid]
            if line is None:  # worker ended
                w["proc"].wait()
                finish(wid, "crash" if w["current"] is not None and w["current"] not in results else "done")
            else:
                msg = json.loads(line)
                w["since"] = now
                if "start" in msg:
                    w["current"] = msg["start"]
                else:
                    results[msg["i"]] = msg
                    w["current"] = None
        for wid, w in list(workers.items()):
            if now - w["since"] > timeout:
                w["proc"].kill()
                w["proc"].wait()
                finish(wid, "hang")
        if progress and now - last_report[0] > 10:
            last_report[0] = now
            bad = sum(1 for r in results.values() if _failing(r["kind"]))
            print(f"[{now - t0:6.0f}s] {len(results)}/{count} programs, {bad} failing, "
                  f"{len(results) / (now - t0):.1f} programs/s", flush=True)
    return {"results": results, "time": time.monotonic() - t0}


def _failing(kind: str) -> bool:
    """Whether an outcome fails the batch: not ok, not a generator reject,
    not a known finding, not a refusal of jitamp.export (--export)."""
    return kind not in ("ok", "reject") and not kind.startswith(("known:", "refused:"))


def summarize(batch: dict) -> str:
    results = batch["results"]
    kinds = collections.Counter(r["kind"] for r in results.values())
    n = len(results)
    eager_raised = sum(1 for r in results.values() if r.get("eager_raised"))
    features = collections.Counter(f for r in results.values() for f in r.get("features", []))
    lines = [f"programs: {n} in {batch['time']:.1f}s ({n / max(batch['time'], 1e-9):.1f} programs/s)"]
    lines.append("outcomes: " + ", ".join(f"{k}={v}" for k, v in sorted(kinds.items())))
    failing = {k: v for k, v in kinds.items() if _failing(k)}
    lines.append(f"mismatches/failures: {sum(failing.values())} " + str(dict(sorted(failing.items()))))
    refused = {k[len("refused:"):]: v for k, v in kinds.items() if k.startswith("refused:")}
    if refused:
        lines.append(f"refused by jitamp.export: {sum(refused.values())} " + str(dict(sorted(refused.items()))))
    lines.append(f"generator rejects: {kinds.get('reject', 0)}")
    lines.append(f"programs where eager raises: {eager_raised}")
    lines.append(f"features covered: {len(features)}")
    return "\n".join(lines)


def _single(args) -> int:
    """One program: run, and on failure shrink and write the reproducer."""
    import warnings
    warnings.simplefilter("ignore")
    import torch
    torch.set_num_threads(1)
    _deterministic_kernels_on(args.device)
    from .generator import generate
    from .runner import repro_source, run_source
    from .shrink import shrink_failure
    if args.export:
        from .export import run_export_source as run_source
    directory = tempfile.mkdtemp(prefix="jitamp_fuzz_")
    program = generate(args.seed, args.index, save_share=args.save_share, device=args.device)
    source = program.render()
    result = run_source(source, directory)
    if args.print:
        print(source)
    print(f"seed {args.seed} index {args.index}: {result.kind}")
    if not result.failed:
        return 0
    print(result.message[:3000])
    if args.out and not args.export:
        if not args.no_shrink and result.kind not in ("crash", "hang"):
            program, tries = shrink_failure(program, result.kind, directory, budget_s=args.shrink_budget)
            print(f"shrunk in {tries} tries")
        os.makedirs(args.out, exist_ok=True)
        path = os.path.join(args.out, f"repro_{args.seed}_{args.index}.py")
        with open(path, "w") as f:
            f.write(repro_source(program.render()))
        print(f"reproducer: {path}")
        print(program.render())
    return 1


def parser(prog: str = "python tools/jitamp_fuzz") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--count", type=int, default=200, help="programs in the batch (default: 200)")
    p.add_argument("--seed", type=int, default=0,
                   help="the generator's seed: (seed, index) names one program (default: 0)")
    p.add_argument("--start", type=int, default=0, help="first index (default: 0)")
    p.add_argument("--stop", type=int, help=argparse.SUPPRESS)
    p.add_argument("--index", type=int, help="run (and shrink) only this program")
    p.add_argument("--jobs", type=int, default=1, help="worker processes (default: 1)")
    p.add_argument("--out", default=None, help="where reproducers go (default: none written)")
    p.add_argument("--save-share", type=float, default=0.3,
                   help="share of programs also compared after torch.jit.save/load (default: 0.3)")
    p.add_argument("--restart-every", type=int, default=250,
                   help="programs a worker runs before it is replaced by a fresh process (default: 250)")
    p.add_argument("--timeout", type=float, default=120.0,
                   help="seconds a program may take before its worker is killed, a \"hang\" (default: 120)")
    p.add_argument("--shrink-budget", type=float, default=120.0,
                   help="seconds spent shrinking one failing program (default: 120)")
    p.add_argument("--max-shrink", type=int, default=20, help="failures shrunk per batch (default: 20)")
    p.add_argument("--no-shrink", action="store_true", help="write reproducers unshrunk")
    p.add_argument("--print", action="store_true", help="print the program's source (--index)")
    p.add_argument("--json", default=None, help="also write every program's outcome here (JSON)")
    p.add_argument("--budget", type=float, default=None,
                   help="seconds the batch may run: then it stops, counting the programs finished")
    p.add_argument("--device", default=None,
                   help="where the programs' tensors live, e.g. cuda: inputs and parameters there, "
                        "scopes and eager regions mostly that device's (default: CPU, scopes mostly CPU's)")
    p.add_argument("--export", action="store_true",
                   help="export mode: compare eager with jitamp.export's program (ep.module()); "
                        "refusals are counted by reason")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    return p


def main(argv=None, prog: str = "python tools/jitamp_fuzz") -> int:
    args = parser(prog).parse_args(argv)
    if args.worker:
        return _worker(args)
    if args.index is not None:
        return _single(args)
    batch = run_batch(args.seed, args.start, args.count, args.jobs, save_share=args.save_share,
                      restart_every=args.restart_every, timeout=args.timeout, device=args.device,
                      budget=args.budget, export=args.export)
    print(summarize(batch))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"seed": args.seed, "device": args.device, "time": batch["time"],
                       "results": [batch["results"][i] for i in sorted(batch["results"])]}, f)
    failing = sorted(i for i, r in batch["results"].items() if _failing(r["kind"]))
    for i in failing:
        r = batch["results"][i]
        print(f"  index {i}: {r['kind']}: {r['message'].splitlines()[0][:200] if r['message'] else ''}")
    if args.out and failing and not args.export:
        for i in failing[:args.max_shrink]:
            cmd = [sys.executable, FUZZER, "--seed", str(args.seed), "--index", str(i),
                   "--out", args.out, "--save-share", str(args.save_share),
                   "--shrink-budget", str(args.shrink_budget)] + (["--no-shrink"] if args.no_shrink else [])
            cmd += ["--device", args.device] if args.device else []
            try:
                done = subprocess.run(cmd, capture_output=True, text=True, timeout=args.shrink_budget + 300)
                line = [ln for ln in done.stdout.splitlines() if ln.startswith("reproducer:")]
                print(f"  index {i}: {line[0] if line else 'no reproducer (' + str(done.returncode) + ')'}")
            except subprocess.TimeoutExpired:
                print(f"  index {i}: shrinking timed out")
    # the unit of a failed run: any failure that is not a known finding
    return 1 if failing else 0
