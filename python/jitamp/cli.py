"""jitamp's command line: `jitamp dump`, `jitamp convert`, `jitamp table`,
`jitamp example` and `jitamp library`. (The differential fuzzer is a
developer tool of the repository, not a command: tools/jitamp_fuzz.)

Bad input gives a one-line `jitamp: error: ...` and exit status 2 (1 for a
failed example); `--verbose` adds the Python traceback.
"""
from __future__ import annotations

import argparse
import contextlib
import difflib
import importlib.util
import os
import re
import sys
import tempfile
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import torch

from ._deprecation import torchscript_deprecation_ignored
from .api import has_autocast


class CliError(Exception):
    """A user-facing error: printed as one line, no traceback."""


_DUMP_EXAMPLE = """\
examples:
  jitamp dump model.py:forward_fn            a function, after jitamp's rewrite
  jitamp dump model.py:Encoder --diff        a module: what jitamp changed
  jitamp dump model.py:make_model --all-methods --inline
  jitamp dump model.py:mlp --optimized --example-inputs 8x16:float32
  jitamp dump saved_model.pt --before        a saved TorchScript model, as saved
"""

_CONVERT_EXAMPLE = """\
examples:
  jitamp convert model.pt model_amp.pt
  jitamp convert ssd.pt ssd_amp.pt --import torchvision    a model that calls torchvision ops
  jitamp convert plain.pt amp.pt --autocast cpu:bfloat16   forward as if inside
                                   `with torch.autocast("cpu", dtype=torch.bfloat16)`
  jitamp convert plain.pt amp.pt --autocast cuda:float16 --methods forward,encode

OUT.pt loads with any loader once jitamp's ops are registered, and runs as
jitamp runs it (it carries what configures it):
  import torch, jitamp                      # Python: import jitamp first
  model = torch.jit.load("model_amp.pt")
  torch::jit::load("model_amp.pt")          // C++: link the jitamp_ops library
"""


def _add_library_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--import", dest="imports", action="append", default=[], metavar="MODULE",
        help="import MODULE first (e.g. torchvision, which registers its ops on import); repeatable",
    )
    parser.add_argument(
        "--library", dest="libraries", action="append", default=[], metavar="PATH",
        help="load the op library PATH first (torch.ops.load_library); repeatable",
    )


def _add_common_flags(parser: argparse.ArgumentParser, profiling_help: str | None = None) -> None:
    if profiling_help:
        parser.add_argument("--profiling-executor", action="store_true", help=profiling_help)
    # Also accepted after the command; SUPPRESS keeps the top-level value.
    parser.add_argument("--verbose", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="jitamp",
        description="Eager-exact autocast for TorchScript: inspect, convert, and export.",
    )
    parser.add_argument("--verbose", action="store_true", help="show tracebacks on errors")
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    dump = sub.add_parser(
        "dump",
        help="print a graph after jitamp's rewrite",
        description="Print the TorchScript graph of TARGET after jitamp's rewrite, "
        "canonicalized (stable value numbering, no source comments unless --source).",
        epilog=_DUMP_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    dump.add_argument(
        "target",
        metavar="TARGET",
        help="path/to/file.py:NAME (a function, an nn.Module subclass constructible "
        "without arguments, or a zero-argument factory returning a module) or a saved "
        "TorchScript file",
    )
    which = dump.add_mutually_exclusive_group()
    which.add_argument("--before", action="store_true", help="the graph as scripted without jitamp")
    which.add_argument("--diff", action="store_true", help="unified diff, before -> after (values keep their names)")
    which.add_argument(
        "--optimized",
        action="store_true",
        help="the executor's optimized graph after a few runs on --example-inputs",
    )
    which.add_argument(
        "--export",
        action="store_true",
        help="the forward graph jitamp.export runs for torch.export to trace (inlined, each "
        "scope's arguments explicit, no smart casts)",
    )
    methods = dump.add_mutually_exclusive_group()
    methods.add_argument("--method", metavar="NAME", help="the module method to dump (default: forward)")
    methods.add_argument("--all-methods", action="store_true", help="every method of the module")
    dump.add_argument("--inline", action="store_true", help="inline callees, as the executor will run them")
    dump.add_argument(
        "--example-inputs",
        metavar="SPEC",
        help="inputs for --optimized: comma-separated SHAPE:DTYPE, e.g. 8x8:float32,8x8:bfloat16 "
        "(SHAPE 'scalar' for a 0-dim tensor)",
    )
    dump.add_argument("--source", action="store_true", help="keep source-location comments")
    _add_library_flags(dump)
    _add_common_flags(dump, profiling_help="rewrite for TorchScript's profiling executor (see jitamp.enable)")

    convert = sub.add_parser(
        "convert",
        help="rewrite every method of a saved TorchScript model and save it",
        description="Load a saved TorchScript model, rewrite every method with jitamp, save it.",
        epilog=_CONVERT_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    convert.add_argument("input", metavar="IN.pt")
    convert.add_argument("output", metavar="OUT.pt")
    convert.add_argument(
        "--autocast",
        metavar="DEVICE:DTYPE",
        help="mixed precision for a model whose source has none: run each of --methods as if its body "
        "were inside `with torch.autocast(DEVICE, dtype=DTYPE)` (cpu:bfloat16, cpu:float16, "
        "cuda:float16, cuda:bfloat16; DEVICE any device type with autocast: xpu, mps, hpu, ..., "
        "or a backend's, with --import of the module that registers it); scopes a method has "
        "stay, nested inside",
    )
    convert.add_argument(
        "--methods",
        metavar="NAME,...",
        help="the methods --autocast wraps (default: forward)",
    )
    _add_library_flags(convert)
    _add_common_flags(convert, profiling_help="run OUT.pt on TorchScript's profiling executor (see jitamp.enable)")

    export = sub.add_parser(
        "export",
        help="a saved TorchScript model as a torch.export program (or ONNX, ExecuTorch), with eager's autocast",
        description="Load a saved TorchScript model (scripted with or without jitamp, or converted), "
        "export its forward with torch.export (jitamp.export), and write it with torch.export.save; "
        "OUT.onnx writes an ONNX model (jitamp.export_onnx), OUT.pte an ExecuTorch program "
        "(jitamp.export_executorch), both of the explicit-casts form. "
        "Two forms: by default each autocast scope is torch.export's autocast region "
        "(wrap_with_autocast), which AOTInductor and ep.module() run under eager's autocast; with "
        "--explicit-casts no region is left and every cast eager's autocast makes is an op of the "
        "program (fixed to this torch's autocast policy), for backends that run no autocast regions: "
        "an inference program, exported under torch.no_grad(). "
        "Both give eager autocast's dtypes and bits; where explicit casts cannot (a fused op whose own "
        "kernel reaches ops autocast casts and that jitamp does not write out), export refuses.",
        epilog="example:\n  python -c \"import torch; torch.save((torch.randn(4, 8),), 'args.pt')\"\n"
        "  jitamp export model.pt args.pt model.pt2\n"
        "  jitamp export --explicit-casts model.pt args.pt model.pt2\n"
        "  jitamp export --dynamic-batch model.pt args.pt model.pt2\n"
        "  jitamp export model.pt args.pt model.onnx     (pip install jitamp[onnx])\n"
        "  jitamp export model.pt args.pt model.pte      (pip install jitamp[executorch])\n\n"
        "OUT.pt2 loads with torch.export.load and needs no jitamp.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    export.add_argument("input", metavar="IN.pt")
    export.add_argument("example_args", metavar="ARGS.pt",
                        help="the example inputs: a torch.save'd tuple (or one tensor)")
    export.add_argument("output", metavar="OUT.pt2|OUT.onnx|OUT.pte")
    export.add_argument("--explicit-casts", action="store_true",
                        help="no autocast regions: every cast eager's autocast makes written out as an op "
                             "(an inference program, exported under torch.no_grad())")
    export.add_argument("--dynamic-batch", action="store_true",
                        help="the first dimension of every tensor input is one batch size the program "
                             "takes at any value (torch.export's dynamic_shapes); refused where the model "
                             "fixes it, as torch.export refuses it for an eager model")
    _add_library_flags(export)
    _add_common_flags(export)

    table = sub.add_parser(
        "table",
        help="the op policy table as the installed torch makes it effective",
        description="Print, per op, the cast policy jitamp applies on CPU and CUDA with the "
        "installed torch, then the table rows this torch does not use (it has no autocast "
        "kernel for them) and the ops this torch autocasts that the table lacks (left to "
        "the dispatcher: results are still eager's inside scopes).",
    )
    table.add_argument("--differences", action="store_true", help="only the differences from the installed torch")
    table.add_argument(
        "--device", metavar="DEVICE",
        help="a device type other than cpu and cuda (xpu, mps, hpu, ..., or a backend's own name after "
        "--import of its module): the ops with an autocast kernel for it, which decide their casts "
        "there (jitamp inserts none for it)")
    _add_library_flags(table)
    _add_common_flags(table)

    example = sub.add_parser(
        "example",
        help="script the bundled model, show its rewritten graph, check it against eager",
        description="Script jitamp.example.TinyEncoder with jitamp, print its rewritten "
        "graph and compare its outputs with eager autocast.",
        epilog="example:\n  python -m jitamp example",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    example.add_argument("--no-graph", action="store_true", help="do not print the graph")
    _add_common_flags(example)

    library = sub.add_parser(
        "library",
        help="print the path of libjitamp_ops.so, the op library for C++ hosts",
        description="Print the path of libjitamp_ops.so: jitamp's ops, kernels and passes "
        "without Python, built against the installed torch. A C++ host links it, or "
        "preloads it (LD_PRELOAD=$(jitamp library) tritonserver ...); cpp/ builds "
        "its example against it with -DJITAMP_OPS_LIBRARY=$(jitamp library).",
    )
    _add_common_flags(library)

    passes = sub.add_parser(
        "passes",
        help="list every pass jitamp runs, pipeline by pipeline, in order",
        description="The one pass list, read from the C++ pipeline "
        "(csrc/jit_autocast/pipeline/pipeline.cpp): each pipeline and its steps in the "
        "order they run, with the header of each pass.",
    )
    passes.add_argument("--markdown", action="store_true", help="as docs/passes.md shows it")
    _add_common_flags(passes)

    opt = sub.add_parser(
        "opt",
        help="run passes of jitamp's pipelines alone on a graph, as LLVM's opt does",
        description="Run jitamp's passes and pipelines (`jitamp passes` lists both) alone, in the "
        "order given, and print the graph they leave, canonicalized. A graph pass or pipeline runs "
        "on the graph of TARGET as TorchScript scripts it (without jitamp; --method picks a "
        "module's), or on FILE.ir (TorchScript IR text; `#` starts a comment). A step of the "
        "freeze pipelines runs on the model, scripted with jitamp and frozen by torch.jit.freeze "
        "alone; the pipelines freeze and standalone_freeze are jitamp.freeze's, optimize_for_inference "
        "is torch.jit.optimize_for_inference's.",
        epilog="example:\n  jitamp opt model.py:fn --passes=rewrite\n"
        "  jitamp opt model.py:fn --passes=rewrite,preoptimize,hoist_loop_casts\n"
        "  jitamp opt graph.ir --passes=remove_fold_barriers\n"
        "  jitamp opt model.py:Net --passes=rewrite_module,fold_static_casts,keep_constants_apart\n"
        "  jitamp opt model.py:Net --passes=standalone_freeze",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    opt.add_argument("target", metavar="TARGET|FILE.ir",
                     help="path/to/file.py:NAME or a saved TorchScript file, as `jitamp dump` takes it, or FILE.ir")
    opt.add_argument("--passes", metavar="NAME,...", required=True,
                     help="passes and pipelines to run, in order (consecutive passes run as one run)")
    opt.add_argument("--method", metavar="NAME", help="the module method (default: forward)")
    opt.add_argument("--fuse-on-cpu", action="store_true",
                     help="TorchScript's fusers fuse on CPU while the passes run "
                     "(torch._C._jit_override_can_fuse_on_cpu; off by default, as in TorchScript), "
                     "for the passes that ask, such as expose_static_casts_to_fuser")
    _add_library_flags(opt)
    _add_common_flags(opt, profiling_help="a model's freeze steps for TorchScript's profiling executor")
    return parser


# --- targets ---------------------------------------------------------------


@dataclass
class Target:
    """What a TARGET names, and how to get it scripted with and without jitamp."""

    label: str
    make_scripted: Callable[[bool], Any]  # with_jitamp -> scripted object


def _load_python_file(path: str) -> Any:
    if not os.path.isfile(path):
        raise CliError(f"no such file: {path}")
    name = "_jitamp_target_" + os.path.splitext(os.path.basename(path))[0].replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise CliError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # TorchScript resolves globals through it
    try:
        with torchscript_deprecation_ignored():
            spec.loader.exec_module(module)
    except Exception as error:
        raise CliError(f"importing {path} failed: {_first_line(error)}") from error
    return module


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__


# Set from --profiling-executor before targets are scripted or rewritten.
_PROFILING_EXECUTOR = False


def _rewrite(obj: Any) -> Any:
    """jitamp.rewrite; its error (the object has already run) as one line."""
    import jitamp

    try:
        jitamp.rewrite(obj, profiling_executor=_PROFILING_EXECUTOR)
        return obj
    except RuntimeError as error:
        raise CliError(_first_line(error)) from error


def _already_scripted(obj: Any, with_jitamp: bool) -> Any:
    return _rewrite(obj) if with_jitamp else obj


def _script(obj: Any, with_jitamp: bool, label: str) -> Any:
    import jitamp

    try:
        with torchscript_deprecation_ignored():
            if with_jitamp:
                with jitamp.enable(profiling_executor=_PROFILING_EXECUTOR):
                    return torch.jit.script(obj)
            was_enabled = jitamp.is_enabled()
            jitamp.disable()
            try:
                return torch.jit.script(obj)
            finally:
                if was_enabled:
                    jitamp.enable()
    except Exception as error:
        raise CliError(f"cannot script {label}: {_first_line(error)}") from error


def _python_target(path: str, name: str) -> Target:
    module = _load_python_file(path)
    if not hasattr(module, name):
        raise CliError(f"no '{name}' in {path}")
    obj = getattr(module, name)
    label = f"{path}:{name}"

    if isinstance(obj, (torch.jit.ScriptModule, torch.jit.ScriptFunction)):
        return Target(label, lambda with_jitamp: _already_scripted(obj, with_jitamp))

    if isinstance(obj, type) and issubclass(obj, torch.nn.Module):
        def module_instance() -> torch.nn.Module:
            try:
                return obj()
            except TypeError as error:
                raise CliError(f"{label} must be constructible without arguments: {_first_line(error)}") from error

        return Target(label, lambda with_jitamp: _script(module_instance(), with_jitamp, label))

    if callable(obj):
        if _is_zero_arg_factory(obj):
            def from_factory(with_jitamp: bool) -> Any:
                try:
                    made = obj()
                except Exception as error:
                    raise CliError(f"{label}() failed: {_first_line(error)}") from error
                if isinstance(made, torch.jit.ScriptModule):
                    return _already_scripted(made, with_jitamp)
                if not isinstance(made, torch.nn.Module):
                    raise CliError(f"{label}() returned {type(made).__name__}, not an nn.Module")
                return _script(made, with_jitamp, label)

            return Target(label, from_factory)
        return Target(label, lambda with_jitamp: _script(obj, with_jitamp, label))
    raise CliError(f"{label} is a {type(obj).__name__}: not a function, module class or factory")


def _is_zero_arg_factory(obj: Any) -> bool:
    """A plain function with no parameters: called to make a module."""
    import inspect

    if not inspect.isfunction(obj):
        return False
    return len(inspect.signature(obj).parameters) == 0


def _version() -> str:
    from . import __version__

    return f"jitamp {__version__} (torch {torch.__version__})"


def _load_libraries(args: argparse.Namespace) -> None:
    for name in getattr(args, "imports", []):
        try:
            importlib.import_module(name)
        except Exception as error:
            raise CliError(f"--import {name} failed: {_first_line(error)}") from error
    for path in getattr(args, "libraries", []):
        try:
            torch.ops.load_library(path)
        except Exception as error:
            raise CliError(f"--library {path} failed: {_first_line(error)}") from error


def _load_error(path: str, error: Exception) -> CliError:
    message = _first_line(error)
    unknown = re.search(r"Unknown builtin op: ([\w:.]+)", str(error))
    if unknown:
        op = unknown.group(1)
        namespace = op.split("::")[0]
        if namespace == "jitamp":
            return CliError(f"cannot load {path}: {message} (jitamp's library is not loaded?)")
        return CliError(
            f"cannot load {path}: it calls {op}, an op no loaded library defines; "
            f"add --import MODULE (the Python package that registers {namespace}:: ops, "
            f"e.g. --import torchvision) or --library PATH (its compiled op library)"
        )
    return CliError(f"cannot load {path} as TorchScript: {message}")


def _saved_target(path: str) -> Target:
    if not os.path.isfile(path):
        raise CliError(f"no such file: {path}")

    def load(with_jitamp: bool) -> Any:
        try:
            with torchscript_deprecation_ignored():
                loaded = torch.jit.load(path)
        except Exception as error:
            raise _load_error(path, error) from error
        return _rewrite(loaded) if with_jitamp else loaded

    return Target(path, load)


def resolve_target(spec: str) -> Target:
    path, sep, name = spec.rpartition(":")
    if sep and path.endswith(".py") and name:
        return _python_target(path, name)
    if spec.endswith(".py"):
        raise CliError(f"name the function or module in {spec}: {spec}:NAME")
    return _saved_target(spec)


# --- graphs ------------------------------------------------------------------


def parse_example_inputs(spec: str) -> list[torch.Tensor]:
    """'8x8:float32,8x8:bfloat16' -> tensors (deterministic values)."""
    tensors = []
    generator = torch.Generator().manual_seed(0)
    for item in spec.split(","):
        shape_text, sep, dtype_name = item.strip().partition(":")
        if not sep or not shape_text or not dtype_name:
            raise CliError(f"bad --example-inputs item '{item}': expected SHAPE:DTYPE, e.g. 8x8:float32")
        dtype = getattr(torch, dtype_name, None)
        if not isinstance(dtype, torch.dtype):
            raise CliError(f"bad --example-inputs item '{item}': unknown dtype '{dtype_name}'")
        if shape_text == "scalar":
            shape: list[int] = []
        else:
            try:
                shape = [int(d) for d in shape_text.split("x")]
            except ValueError:
                raise CliError(f"bad --example-inputs item '{item}': shape must look like 8x8") from None
            if any(d < 0 for d in shape):
                raise CliError(f"bad --example-inputs item '{item}': negative size")
        if dtype.is_floating_point or dtype.is_complex:
            tensors.append(torch.randn(shape, generator=generator).to(dtype))
        elif dtype == torch.bool:
            tensors.append(torch.randint(0, 2, shape, generator=generator).bool())
        else:
            tensors.append(torch.randint(0, 10, shape, generator=generator).to(dtype))
    return tensors


def _functions(scripted: Any, method: str | None, all_methods: bool) -> list[tuple[str, Any]]:
    """(name, ScriptFunction/ScriptMethod) pairs to dump."""
    if isinstance(scripted, torch.jit.ScriptFunction):
        if method or all_methods:
            raise CliError("--method/--all-methods apply to modules; the target is a function")
        return [(scripted.name, scripted)]
    names = scripted._c._method_names()
    if all_methods:
        return [(name, getattr(scripted, name)) for name in sorted(names)]
    wanted = method or "forward"
    if wanted not in names:
        raise CliError(f"the module has no method '{wanted}' (it has: {', '.join(sorted(names)) or 'none'})")
    return [(wanted, getattr(scripted, wanted))]


def render(graph: torch._C.Graph, *, inline: bool, source: bool) -> str:
    graph = graph.copy()
    if inline:
        torch._C._jit_pass_inline(graph)
    graph = torch._C._jit_pass_canonicalize(graph)
    text = graph.str(source)
    if not source:
        # Nodes in nested blocks keep their source comments in graph.str().
        text = re.sub(r" # [^\n]*:\d+:\d+$", "", text, flags=re.M)
    # Class names get a ___torch_mangle_N part when a type is compiled again
    # in one process (as --before/--diff do); N depends on history.
    return re.sub(r"___torch_mangle_\d+\.", "", text)


def _optimized_graph(function: Any, inputs: list[torch.Tensor]) -> torch._C.Graph:
    try:
        with torchscript_deprecation_ignored():
            for _ in range(3):
                function(*inputs)
            function(*inputs)
            return torch.jit.last_executed_optimized_graph()
    except Exception as error:
        raise CliError(f"running with --example-inputs failed: {_first_line(error)}") from error


def dump(args: argparse.Namespace) -> str:
    if args.optimized and not args.example_inputs:
        raise CliError("--optimized needs --example-inputs SPEC, e.g. --example-inputs 8x8:float32")
    if args.example_inputs and not args.optimized:
        raise CliError("--example-inputs is used with --optimized")
    inputs = parse_example_inputs(args.example_inputs) if args.optimized else []
    target = resolve_target(args.target)

    before_text: dict[str, str] = {}
    if args.before or args.diff:
        before = target.make_scripted(False)
        for name, fn in _functions(before, args.method, args.all_methods):
            before_text[name] = render(fn.graph, inline=args.inline, source=args.source)
        if args.before:
            return _join(before_text, args.all_methods)

    after = target.make_scripted(True)
    if args.export:
        if args.method not in (None, "forward") or args.all_methods:
            raise CliError("--export shows forward, the method jitamp.export converts")
        from ._export import export_graph

        return render(export_graph(after), inline=False, source=args.source)
    after_text: dict[str, str] = {}
    for name, fn in _functions(after, args.method, args.all_methods):
        if args.optimized:
            after_text[name] = render(_optimized_graph(fn, inputs), inline=False, source=args.source)
        else:
            after_text[name] = render(fn.graph, inline=args.inline, source=args.source)
    if args.diff:
        chunks = []
        for name, text in after_text.items():
            before = before_text.get(name, "")
            chunks.extend(
                difflib.unified_diff(
                    before.splitlines(keepends=True),
                    keep_value_names(before, text).splitlines(keepends=True),
                    fromfile=f"{name} (before)",
                    tofile=f"{name} (after jitamp)",
                )
            )
        return "".join(chunks)
    return _join(after_text, args.all_methods)


def opt(args: argparse.Namespace) -> str:
    from . import passes as _passes

    names = [name.strip() for name in args.passes.split(",")]
    if not all(names):
        raise CliError(f"bad --passes '{args.passes}': expected NAME,NAME,... (`jitamp passes` lists them)")
    module_pipelines = _passes.MODULE_PIPELINES
    module_steps = {step.name for step in _passes.STEPS if step.on_model}
    graph_names = _passes.GRAPH_PASSES | set(_passes.GRAPH_PIPELINES)
    for name in names:
        if name not in graph_names and name not in module_steps and name not in module_pipelines:
            raise CliError(f"no pass or pipeline named '{name}' (`jitamp passes` lists them)")
    on_module = [name for name in names if name not in graph_names]  # (some are both)
    if on_module:
        on_graph = [name for name in names if name not in module_steps and name not in module_pipelines]
        if on_graph:
            raise CliError(f"--passes mixes graph passes ({', '.join(on_graph)}) with steps of the freeze "
                           f"pipelines, which run on a model ({', '.join(on_module)}): run them apart")
        if any(name in module_pipelines for name in names) and len(names) > 1:
            raise CliError(f"a freeze pipeline runs whole, alone: --passes={' or --passes='.join(module_pipelines)}")
        frozen = _frozen_for_opt(args, names)
        return render(_functions(frozen, args.method, False)[0][1].graph, inline=False, source=False)
    graph = _graph_for_opt(args)
    batch: list[str] = []  # consecutive passes, run as one run
    with _fusing_on_cpu(args.fuse_on_cpu):
        for name in names + [""]:
            if name in _passes.GRAPH_PASSES:
                batch.append(name)
                continue
            if batch:
                _passes.run(batch, graph)
                batch = []
            if name:
                graph = _passes.run_pipeline(name, graph)
    return render(graph, inline=False, source=False)


@contextlib.contextmanager
def _fusing_on_cpu(on: bool) -> Iterator[None]:
    """TorchScript's fusers fuse on CPU for the block where `on`; the
    previous setting after."""
    previous = torch._C._jit_can_fuse_on_cpu()
    torch._C._jit_override_can_fuse_on_cpu(on or previous)
    try:
        yield
    finally:
        torch._C._jit_override_can_fuse_on_cpu(previous)


def _graph_for_opt(args: argparse.Namespace) -> torch._C.Graph:
    """A copy of the graph `jitamp opt` starts from: FILE.ir, or TARGET's
    (--method's) as TorchScript scripts it, without jitamp."""
    if not args.target.endswith(".ir"):
        scripted = resolve_target(args.target).make_scripted(False)
        return _functions(scripted, args.method, False)[0][1].graph.copy()
    if args.method:
        raise CliError("--method applies to a model; FILE.ir holds one graph")
    try:
        with open(args.target) as f:
            text = f.read()
    except OSError as error:
        raise CliError(f"cannot read {args.target}: {error.strerror}") from None
    try:
        return torch._C.parse_ir(text, parse_tensor_constants=True)
    except RuntimeError as error:
        raise CliError(f"{args.target} is not TorchScript IR: {error}") from None


def _frozen_for_opt(args: argparse.Namespace, names: list[str]) -> Any:
    """TARGET scripted with jitamp and frozen: as jitamp.freeze or
    torch.jit.optimize_for_inference do for a freeze pipeline, else by
    torch.jit.freeze alone and then the steps `names`."""
    from . import _loader, api, passes as _passes

    if args.target.endswith(".ir"):
        raise CliError(f"{names[0]} runs on a model (path/to/file.py:NAME or a saved file), not on FILE.ir")
    scripted = resolve_target(args.target).make_scripted(True)
    if not isinstance(scripted, torch.jit.ScriptModule):
        raise CliError(f"{names[0]} runs on a module; the target is a function")
    scripted.eval()
    profiling = _PROFILING_EXECUTOR
    with torchscript_deprecation_ignored():
        if names[0] == "optimize_for_inference":
            api.rewrite(scripted, profiling_executor=profiling)
            return torch.jit.optimize_for_inference(scripted)
        if names[0] in _passes.MODULE_PIPELINES:
            try:
                return api.freeze(scripted, profiling_executor=profiling,
                                  standalone=names[0] == "standalone_freeze")
            except ValueError as error:  # what keeps the model from freezing standalone, by line
                raise CliError(str(error)) from None
        api.rewrite(scripted, profiling_executor=profiling)
        frozen = _loader.plain_freeze(scripted)
        _passes.run_on_module(names, frozen, simple_executor=not profiling)
        return frozen


_VALUE = re.compile(r"%([\w.]+)")
_DEFINED_VALUE = re.compile(r"%([\w.]+) :")


def keep_value_names(before: str, after: str) -> str:
    """Renames the values of AFTER to the names their counterparts have in BEFORE.

    Both texts are canonicalized graphs, numbered in order, so a node that the
    rewrite inserts shifts the number of every value after it and a plain diff
    shows every line as changed. Lines that match once value names are blanked
    out pair their definitions (`%name : Type`); values only AFTER defines get
    numbers past BEFORE's highest.
    """
    before_lines, after_lines = before.splitlines(), after.splitlines()

    def shape(line: str) -> str:
        return _VALUE.sub("%", line)

    matcher = difflib.SequenceMatcher(
        None, [shape(line) for line in before_lines], [shape(line) for line in after_lines], autojunk=False
    )
    rename: dict[str, str] = {}
    taken: set[str] = set()
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            old_defs = _DEFINED_VALUE.findall(before_lines[block.a + k])
            new_defs = _DEFINED_VALUE.findall(after_lines[block.b + k])
            for new, old in zip(new_defs, old_defs):
                if new not in rename and old not in taken:
                    rename[new] = old
                    taken.add(old)

    before_names = set(_VALUE.findall(before))
    next_number = 1 + max((int(name) for name in before_names if name.isdigit()), default=-1)
    for line in after_lines:
        for name in _DEFINED_VALUE.findall(line):
            if name in rename:
                continue
            fresh = name
            if name.isdigit() or name in before_names or name in taken:
                while str(next_number) in before_names or str(next_number) in taken:
                    next_number += 1
                fresh = str(next_number)
            rename[name] = fresh
            taken.add(fresh)
    return _VALUE.sub(lambda m: "%" + rename.get(m.group(1), m.group(1)), after)


def _join(texts: dict[str, str], headers: bool) -> str:
    if not headers:
        return next(iter(texts.values()))
    return "".join(f"# method {name}\n{text}" for name, text in texts.items())


_AUTOCAST_DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16}


def parse_autocast(spec: str) -> tuple[str, torch.dtype]:
    """'cpu:bfloat16' -> ("cpu", torch.bfloat16). DEVICE: any device type
    eager's autocast takes (torch.amp.is_autocast_available), a renamed
    PrivateUse1 backend's name included once its module is imported."""
    device, sep, dtype = spec.partition(":")
    if not sep or not has_autocast(device) or dtype not in _AUTOCAST_DTYPES:
        raise CliError(
            f"bad --autocast '{spec}': expected DEVICE:DTYPE with DEVICE a device type with "
            "autocast (cpu, cuda, xpu, mps, hpu, ...; a backend's own name after --import of "
            f"its module) and DTYPE one of {', '.join(_AUTOCAST_DTYPES)}, e.g. cpu:bfloat16"
        )
    return device, _AUTOCAST_DTYPES[dtype]


def convert(args: argparse.Namespace) -> str:
    _check_output_folder(args.output)
    if args.methods is not None and args.autocast is None:
        raise CliError("--methods chooses the methods --autocast wraps: give --autocast DEVICE:DTYPE too")
    if args.autocast is None:
        scripted = _saved_target(args.input).make_scripted(True)
        done = ""
    else:
        device, dtype = parse_autocast(args.autocast)
        methods = [name.strip() for name in (args.methods or "forward").split(",")]
        if not all(methods):
            raise CliError(f"bad --methods '{args.methods}': expected NAME,NAME,...")
        loaded = _saved_target(args.input).make_scripted(False)
        present = set(loaded._c._method_names())
        missing = [name for name in methods if name not in present]
        if missing:
            raise CliError(
                f"{args.input} has no method {', '.join(missing)} (it has: {', '.join(sorted(present)) or 'none'})"
            )
        import jitamp

        try:
            jitamp.add_autocast(loaded, device, dtype, methods=methods, profiling_executor=_PROFILING_EXECUTOR)
        except Exception as error:
            raise CliError(f"cannot convert {args.input}: {_first_line(error)}") from error
        scripted = loaded
        done = f"; {', '.join(methods)} run{'s' if len(methods) == 1 else ''} under autocast {args.autocast}"
    with torchscript_deprecation_ignored():
        _save_atomically(args.output, lambda path: torch.jit.save(scripted, path))
    return f"wrote {args.output}{done} (load it with torch.jit.load after `import jitamp`, or jitamp.load)\n"


# what OUT's suffix makes: the program for torch.export.save, an ONNX
# model, an ExecuTorch program (both from the explicit-casts form)
_EXPORT_TARGETS = {".pt2": "torch.export", ".onnx": "ONNX", ".pte": "ExecuTorch"}


def export(args: argparse.Namespace) -> str:
    target = _EXPORT_TARGETS.get(os.path.splitext(args.output)[1])
    if target is None:
        raise CliError(f"cannot tell what to write to {args.output}: name it OUT.pt2 (torch.export), "
                       "OUT.onnx (ONNX) or OUT.pte (ExecuTorch)")
    if target != "torch.export":
        args.explicit_casts = True  # (the only form either runtime runs)
    _check_output_folder(args.output)
    loaded = _saved_target(args.input).make_scripted(False)
    if not os.path.isfile(args.example_args):
        raise CliError(f"no such file: {args.example_args}")
    example = _example_inputs(args.example_args)
    import jitamp

    options = {"dynamic_shapes": _dynamic_batch(example)} if args.dynamic_batch else {}
    try:
        with torch.no_grad() if args.explicit_casts else contextlib.nullcontext():  # (an inference form)
            program = jitamp.export(loaded, example, explicit_casts=args.explicit_casts, **options)
            if target == "ONNX":
                onnx_program = jitamp.export_onnx(program, example, **options)
                save = onnx_program.save
            elif target == "ExecuTorch":
                manager = jitamp.export_executorch(program, example, **options)
                save = _writer(manager.buffer)
            else:
                save = lambda path: torch.export.save(program, path)  # noqa: E731
    except jitamp.ExportError as error:
        raise CliError(f"cannot export {args.input}: {str(error).split(': ', 1)[-1]}") from error
    except ImportError as error:
        extra = "onnx" if target == "ONNX" else "executorch"
        raise CliError(f"cannot write {target}: {_first_line(error)} (pip install jitamp[{extra}])") from error
    except Exception as error:
        raise CliError(f"cannot export {args.input}: {_first_line(error)}") from error
    _save_atomically(args.output, save)
    from ._export import _region_nodes

    casts = sum(node.target is torch.ops.aten._to_copy.default for node in program.graph.nodes)
    regions = len(_region_nodes(program))
    form = (f"no autocast region, {casts} explicit cast{'' if casts == 1 else 's'}" if args.explicit_casts
            else f"{regions} autocast region{'' if regions == 1 else 's'}")
    runs = {"torch.export": "load it with torch.export.load; it needs no jitamp",
            "ONNX": "an ONNX model, for onnxruntime and other ONNX runtimes",
            "ExecuTorch": "an ExecuTorch program, for executorch.runtime or its C++ runtime"}[target]
    return f"wrote {args.output}: {form} ({runs})\n"


def _writer(data: bytes) -> Callable[[str], None]:
    def write(path: str) -> None:
        with open(path, "wb") as file:
            file.write(data)
    return write


def _dynamic_batch(example: tuple) -> tuple:
    """--dynamic-batch's dynamic_shapes: the first dimension of every
    tensor input (at any depth) is one batch size, 1 to 2**20."""
    from torch.export import Dim

    batch = Dim("batch", min=1, max=2 ** 20)
    return tuple(torch.utils._pytree.tree_map(
        lambda leaf: {0: batch} if isinstance(leaf, torch.Tensor) and leaf.dim() > 0 else None, argument)
        for argument in example)


def _example_inputs(path: str) -> tuple:
    """The example inputs `path` holds (a tuple or list of them, or one
    tensor), loaded with weights_only=True: tensors, Python scalars, None,
    and tuples, lists and dicts of them load, and a file that would run code
    or make other objects while it loads is refused (on every torch: before
    2.6 torch.load unpickled anything by default)."""
    try:
        example = torch.load(path, weights_only=True)
    except Exception as error:
        if "Weights only load failed" in str(error) or "nsupported global" in str(error).lower():
            found = re.search(r"(?i)unsupported global:?\s+(?:GLOBAL\s+)?([\w.]+)", str(error))
            raise CliError(f"refusing {path}: it holds more than tensors"
                           f"{' (' + found.group(1) + ')' if found else ''}, and loading it would run "
                           f"code of the file's (torch.load with weights_only=True)") from error
        raise CliError(f"cannot load {path} with torch.load: {_first_line(error)}") from error
    if isinstance(example, list):
        example = tuple(example)
    elif not isinstance(example, tuple):
        example = (example,)
    bad = [type(leaf).__name__ for leaf in torch.utils._pytree.tree_leaves(example)
           if not isinstance(leaf, (torch.Tensor, bool, int, float, type(None)))]
    if bad:
        raise CliError(f"{path} holds {', '.join(sorted(set(bad)))} among its example inputs: expected "
                       f"tensors (a tuple or list of them, or one), with Python numbers or None beside them")
    return example


def _check_output_folder(output: str) -> None:
    """A missing output folder, said before the model is loaded and worked on."""
    directory = os.path.dirname(os.path.abspath(output))
    if not os.path.isdir(directory):
        raise CliError(f"cannot save {output}: no such directory: {directory}")


def _save_atomically(output: str, save: Callable[[str], None]) -> None:
    """`save(path)` to a new file beside `output`, then renamed to it: a
    save that fails or is interrupted leaves whatever was at `output` (the
    model being converted in place, say) as it was."""
    directory, name = os.path.split(os.path.abspath(output))
    try:
        descriptor, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=os.path.splitext(name)[1] or ".tmp",
                                                 dir=directory)
    except OSError as error:
        raise CliError(f"cannot save {output}: {error.strerror}: {directory}") from error
    os.close(descriptor)
    try:
        save(temporary)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # as a file the save made itself
        os.replace(temporary, output)
    except Exception as error:
        raise CliError(f"cannot save {output}: {_first_line(error)}") from error
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


# The dispatch key of each device type's autocast kernels (by the name
# c10::DeviceType prints; PrivateUse1 under any name its backend gives it).
_AUTOCAST_KEYS = {"xpu": "AutocastXPU", "ipu": "AutocastIPU", "hpu": "AutocastHPU", "xla": "AutocastXLA",
                  "mps": "AutocastMPS", "mtia": "AutocastMTIA", "maia": "AutocastMAIA",
                  "privateuseone": "AutocastPrivateUse1"}


def _other_device_table(device: str) -> str:
    """`jitamp table --device DEVICE` for a device type other than CPU and
    CUDA: jitamp's smart casts leave such tensors to the op's own autocast
    kernel (ops/cast_ops.cpp), so what decides is what the backend
    registered on its autocast key."""
    if device in ("cpu", "cuda"):
        raise CliError(f"--device {device}: the table without --device shows cpu and cuda")
    if not has_autocast(device):
        raise CliError(f"--device {device}: not a device type with autocast "
                       "(torch.amp.is_autocast_available); a backend's own name needs --import of its module")
    name = "privateuseone" if device == torch._C._get_privateuse1_backend_name() else device
    key = _AUTOCAST_KEYS.get(name)
    if key is None:
        raise CliError(f"--device {device}: this jitamp does not know the autocast dispatch key of {device}")
    ops = sorted(torch._C._dispatch_get_registrations_for_dispatch_key(key))
    lines = [f"torch {torch.__version__}, device {device} ({key})",
             "jitamp inserts no casts for this device: in a scope, each op on its tensors runs its own "
             "autocast kernel, as in eager",
             f"ops with an autocast kernel for {device}: {len(ops)}"]
    lines.extend(f"  {op}" for op in ops)
    return "\n".join(lines) + "\n"


def table(args: argparse.Namespace) -> str:
    from .passes import ops_missing_from_table, policy_table

    if args.device is not None:
        return _other_device_table(args.device)
    rows = policy_table()
    lines = [f"torch {torch.__version__}"]
    if not args.differences:
        lines.append(f"{'op':<48} {'cpu':<20} cuda")
        for row in rows:
            if row.effective_cpu != "none" or row.effective_cuda != "none":
                via = f"  (via {row.via})" if row.via else ""
                lines.append(f"{row.op:<48} {_dash(row.effective_cpu):<20} {_dash(row.effective_cuda)}{via}")
    unused = [
        f"  {row.op} on {device}: table says {row.policy(device)}"
        for row in rows
        for device in ("cpu", "cuda")
        if row.policy(device) != "none" and row.effective(device) == "none"
    ]
    lines.append(f"table rows this torch does not autocast (not applied): {len(unused)}")
    lines.extend(unused)
    missing = [f"  {op} on {device}" for device in ("cpu", "cuda") for op in ops_missing_from_table(device)]
    lines.append(f"ops this torch autocasts that the table lacks (left to the dispatcher): {len(missing)}")
    lines.extend(missing)
    varies = [f"  {row.op}: {row.varies}" for row in rows if row.varies and not row.implied]
    lines.append(f"ops torch versions autocast differently (cast as the loading torch does): {len(varies)}")
    lines.extend(varies)
    return "\n".join(lines) + "\n"


def _dash(policy: str) -> str:
    return "-" if policy == "none" else policy


def main(argv: list[str] | None = None) -> int:
    global _PROFILING_EXECUTOR
    argv = sys.argv[1:] if argv is None else list(argv)
    args = _parser().parse_args(argv)
    _PROFILING_EXECUTOR = getattr(args, "profiling_executor", False)
    try:
        _load_libraries(args)
        if args.command == "dump":
            sys.stdout.write(dump(args))
        elif args.command == "convert":
            sys.stdout.write(convert(args))
        elif args.command == "export":
            sys.stdout.write(export(args))
        elif args.command == "table":
            sys.stdout.write(table(args))
        elif args.command == "opt":
            sys.stdout.write(opt(args))
        elif args.command == "library":
            from ._library import library_path

            print(library_path())
        elif args.command == "passes":
            from . import passes as _passes

            if args.markdown:
                print(_passes.markdown())
            else:
                for pipeline, names in _passes.PIPELINES.items():
                    print(f"{pipeline}: {' -> '.join(names)}")
        elif args.command == "example":
            from .example import run

            return 0 if run(show_graph=not args.no_graph) else 1
        return 0
    except CliError as error:
        if args.verbose:
            traceback.print_exc()
        print(f"jitamp: error: {error}", file=sys.stderr)
        return 2
    except Exception as error:  # a bug of ours or torch's: say so in one line
        if args.verbose:
            traceback.print_exc()
        print(f"jitamp: error: {type(error).__name__}: {_first_line(error)} (--verbose for details)", file=sys.stderr)
        return 2
