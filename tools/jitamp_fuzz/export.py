"""The fuzzer's export mode (`python tools/jitamp_fuzz --export`): each program scripted
with jitamp, exported with jitamp.export in both forms (regions, then
explicit casts), and each program's `ep.module()` compared with eager on
calls 1, 2 and 3 by the oracle's rules (outputs, dtypes, bits, errors, the
autocast state after the call; no gradients).
Exported and called under the program's OUTER (an eager autocast, no_grad
or inference_mode region), as a user exports in the state the program will
run in. A program jitamp.export refuses is `refused:<reason>` (not a
failure: the reasons are counted); one it accepts and that differs is a
`mismatch:<what>`; the explicit-casts form's are `refused:explicit-casts-
<reason>` and `explicit-casts-mismatch:<what>`."""
from __future__ import annotations

import contextlib
import re
import traceback
import warnings
import torch

import jitamp.testing as oracle
from .runner import (CALLS, Result, _eager_raises, _unwrapping_callee_errors, classify, jitamp_enabled,
                     load_source, make_outer, unload)


def run_export_source(source: str, directory: str, stem: str = "fx") -> Result:
    oracle.reset_autocast_state()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return _run(source, directory, stem)
        finally:
            oracle.reset_autocast_state()


def refusal(message: str) -> str:
    """The reason an ExportError gives, as a short key."""
    if "known only at run time" in message:
        return "run-time-scope-argument"
    if "takes no forks" in message:
        return "fork"
    if "@torch.jit.ignore" in message:
        return "ignored-python"
    if "used otherwise than by the scope" in message:
        return "escaping-scope-object"
    if "has no torch.export form" in message:
        return "jitamp-op"
    if "with explicit casts the program computes otherwise" in message:
        return "op-kept-whole-reaches-casts"
    traced = re.search(r"cannot trace the model: ([\w:]+): (\w+)", message)
    if traced:
        return f"trace:{traced.group(1)}:{traced.group(2)}"
    if "cannot trace the model" in message:
        return "trace:" + re.sub(r"[^\w]+", "-", message.split("cannot trace the model: ", 1)[1][:40]).strip("-")
    return "other"


def _run(source: str, directory: str, stem: str) -> Result:
    try:
        with jitamp_enabled(True):
            module = load_source(source, directory, stem)
            module.SOURCE = source
            obj = module.build()
            scripted = torch.jit.script(obj)
    except Exception as exc:  # the normal mode classifies scripting failures
        return Result("reject", f"{type(exc).__name__}: {exc}")
    try:
        outer = make_outer(module.OUTER)
        for explicit_casts in (False, True):
            result = _run_form(module, obj, scripted, outer, explicit_casts)
            if result is not None:
                return result
        return Result("ok")
    except Exception:
        return Result("harness", traceback.format_exc())
    finally:
        unload(module)


def _run_form(module, obj, scripted, outer, explicit_casts: bool) -> Result | None:
    """The program in one form (regions, or explicit casts) against eager;
    None where it matches."""
    import jitamp

    form = "explicit-casts-" if explicit_casts else ""
    if explicit_casts:  # an inference form: exported, and compared, under no_grad
        outer = _under_no_grad(outer)
    with jitamp_enabled(module.RUNTIME_JITAMP):
        try:
            with outer() if outer is not None else contextlib.nullcontext():
                program = jitamp.export(scripted, tuple(module.make_args(1)), explicit_casts=explicit_casts)
        except jitamp.ExportError as exc:
            reason = refusal(str(exc))
            if reason.startswith("trace:") and _eager_raises(obj, module):
                reason = "trace-where-eager-raises"  # (the trace meets the error eager's call raises)
            return Result(f"refused:{form}{reason}", str(exc))
        except Exception:
            return Result(f"{form}export-crash", traceback.format_exc())
        fixed = [call for call in CALLS if _same_non_tensors(module.make_args(1), module.make_args(call))]
        try:
            oracle.check_against_eager(_unwrapping_callee_errors(obj), module.make_args(1),
                                       scripted=program.module(), outer=outer, calls=fixed, grad=False,
                                       args_for_call=module.make_args)
        except AssertionError as exc:
            return Result(f"{form}mismatch:" + classify(str(exc)), str(exc))
        for call in sorted(set(CALLS) - set(fixed)):
            # torch.export fixes a non-tensor input (a flag, an int,
            # None) to the example's: the program must refuse another
            with outer() if outer is not None else contextlib.nullcontext():
                try:
                    program.module()(*module.make_args(call))
                except Exception:
                    continue
            return Result(f"{form}mismatch:unguarded-input", f"call {call}: the program computed with a "
                          f"non-tensor input other than the example's it was exported with")
    return None


def _under_no_grad(outer):
    def entered() -> contextlib.ExitStack:
        stack = contextlib.ExitStack()
        stack.enter_context(torch.no_grad())
        if outer is not None:
            stack.enter_context(outer())
        return stack

    return entered


def _same_non_tensors(example: list, args: list) -> bool:
    """Whether `args` differ from `example` in tensors' values only."""
    if len(example) != len(args):
        return False
    for a, b in zip(example, args):
        if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
            if a.shape != b.shape or a.dtype != b.dtype:
                return False
        elif type(a) is not type(b) or a != b:
            return False
    return True
