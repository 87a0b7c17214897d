"""python_host: jitamp_run's twin in Python, for a Python server that never
imports jitamp and gets its ops by loading the op library itself
(`torch.ops.load_library(path)`, path = `jitamp library`), then loads models
with plain torch.jit.load (PyTorch's JIT autocast left on, as in any process
that never imported jitamp).

    python python_host.py --library PATH [--autocast | --autocast-fp16]
        [--no-grad | --inference-mode] [--grad FILE] [--calls N]
        MODEL.pt INPUT.bin ROWS COLS OUTPUT.bin

Same inputs, outputs and checks as tests/cpp/jitamp_run.cpp: INPUT.bin is a
ROWS x COLS float32 tensor (raw little-endian bytes); forward runs N times
(default 3) and must return the same dtype, shape and bits each time; the
last output, as float32, goes to OUTPUT.bin; stdout says `dtype <c10 name>`
and `shape <sizes>`. Errors: one line on stderr, exit status 1.
"""
import argparse
import contextlib
import sys

import torch

C10_NAMES = {torch.float32: "Float", torch.bfloat16: "BFloat16", torch.float16: "Half"}


def _parse(argv):
    parser = argparse.ArgumentParser(prog="python_host")
    parser.add_argument("--library", required=True)
    region = parser.add_mutually_exclusive_group()
    region.add_argument("--autocast", dest="dtype", action="store_const", const=torch.bfloat16)
    region.add_argument("--autocast-fp16", dest="dtype", action="store_const", const=torch.float16)
    grad_mode = parser.add_mutually_exclusive_group()
    grad_mode.add_argument("--no-grad", action="store_true")
    grad_mode.add_argument("--inference-mode", action="store_true")
    parser.add_argument("--grad", metavar="FILE")
    parser.add_argument("--calls", type=int, default=3)
    for name in ("model", "input", "rows", "cols", "output"):
        parser.add_argument(name)
    return parser.parse_args(argv)


def _same_bits(a, b):
    return (a.dtype == b.dtype and a.shape == b.shape
            and a.detach().contiguous().view(torch.uint8).equal(b.detach().contiguous().view(torch.uint8)))


def _write(path, t) -> None:
    """As float32, raw bytes in host (little-endian) order."""
    with open(path, "wb") as f:
        f.write(bytes(t.detach().float().contiguous().view(torch.uint8).flatten().tolist()))


def run(args) -> None:
    torch.ops.load_library(args.library)
    assert "jitamp" not in sys.modules, "python_host must not import jitamp"
    if (args.no_grad or args.inference_mode) and args.grad:
        raise ValueError("--grad needs gradients: drop --no-grad and --inference-mode")
    rows, cols = int(args.rows), int(args.cols)
    with open(args.input, "rb") as f:
        x = torch.frombuffer(bytearray(f.read()), dtype=torch.float32).reshape(rows, cols)
    module = torch.jit.load(args.model)
    grad_mode = (torch.inference_mode() if args.inference_mode
                 else torch.no_grad() if args.no_grad else contextlib.nullcontext())
    first = first_grad = output = grad = None
    with grad_mode:
        for call in range(1, args.calls + 1):
            leaf = x.clone().requires_grad_(True) if args.grad else x
            region = (torch.autocast("cpu", dtype=args.dtype) if args.dtype
                      else contextlib.nullcontext())
            with region:
                output = module(leaf)
            if args.grad:
                # d(sum(output as float32)) / d(input), outside the region.
                output.float().sum().backward()
                grad = leaf.grad
            if call == 1:
                first, first_grad = output, grad
            elif not _same_bits(first, output) or (grad is not None and not _same_bits(first_grad, grad)):
                raise RuntimeError(f"call {call} returned a different output or gradient than call 1")
    _write(args.output, output)
    if args.grad:
        _write(args.grad, grad)
    print(f"dtype {C10_NAMES[output.dtype]}\nshape {' '.join(str(s) for s in output.shape)}")


def main() -> int:
    args = _parse(sys.argv[1:])
    try:
        run(args)
    except Exception as error:  # noqa: BLE001 - the error is the output
        print(f"python_host: error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
