"""What TorchScript's parser gets while jitamp is enabled: `@torch.autocast(...)`
as a decorator, and autocast blocks left early (_early_exits.py).

Eager runs a decorated function as if its body were inside
`with torch.autocast(...):`. TorchScript refuses the decorated function
("@autocast() decorator is not supported in script mode") when it is
scripted or called from scripted code, and compiles a decorated method
(`forward`) without its autocast. While jitamp is enabled (jitamp/_patches.py
installs the replacements written here):

- TorchScript's parser (`torch.jit.frontend.parse_def`) gets the function's
  AST with each autocast decorator turned into a `with` around the body
  (decorators apply bottom-up, so the lowest is the innermost scope); the
  pass then lowers those scopes like any other;
- `torch.jit.script` given an autocast-decorated function (directly, or
  for a callee of scripted code) scripts the function it decorates, whose
  source carries the decorators;
- the same AST has each autocast block that a `return`, `break` or
  `continue` leaves early spelled as jitamp's scope ops (_early_exits.py).

A decorator is an autocast one when it is a call of a name that resolves, in
the function's globals, to an autocast class (torch.autocast,
torch.amp.autocast, torch.cpu.amp.autocast, torch.cuda.amp.autocast).
"""
from __future__ import annotations

import ast
import inspect
import sys
import textwrap
from typing import Any, Callable

import torch
from torch.amp.autocast_mode import autocast as _autocast

from . import _early_exits

_UNSUPPORTED = "@autocast() decorator is not supported in script mode"


def _resolve(node: ast.expr, scope: dict[str, Any]) -> Any:
    """The object a Name / Attribute chain names in `scope`, or None."""
    if isinstance(node, ast.Name):
        return scope.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, scope)
        return getattr(base, node.attr, None) if base is not None else None
    return None


def _is_autocast_call(expr: ast.expr, scope: dict[str, Any]) -> bool:
    """Whether `expr` calls what resolves in `scope` to an autocast class."""
    if not isinstance(expr, ast.Call):
        return False
    target = _resolve(expr.func, scope)
    return isinstance(target, type) and issubclass(target, _autocast)


def _scope_of(fn: Any) -> dict[str, Any]:
    original = inspect.unwrap(fn)
    scope = dict(getattr(original, "__globals__", {}))
    closure = getattr(original, "__closure__", None) or ()
    for name, cell in zip(getattr(getattr(original, "__code__", None), "co_freevars", ()), closure):
        try:
            scope[name] = cell.cell_contents
        except ValueError:  # an empty cell
            pass
    return scope


def _decorating_instances(fn: Any) -> list[Any]:
    """The autocast objects of fn's autocast decorators, outermost first, as
    eager built them when it decorated fn; [] where they cannot be found."""
    original = inspect.unwrap(fn)
    top = fn if fn is not original else None
    if top is None:
        owner: Any = sys.modules.get(getattr(original, "__module__", None) or "")
        for part in getattr(original, "__qualname__", "").split(".")[:-1]:
            owner = getattr(owner, part, None) if part != "<locals>" else None
        candidate = inspect.getattr_static(owner, original.__name__, None) if owner is not None else None
        if candidate is not None and candidate is not original and inspect.unwrap(candidate) is original:
            top = candidate
    instances = []
    layer = top
    while layer is not None and layer is not original:
        code = getattr(layer, "__code__", None)
        if code is not None and "autocast_instance" in code.co_freevars:
            cell = layer.__closure__[code.co_freevars.index("autocast_instance")]
            instances.append(cell.cell_contents)
        layer = getattr(layer, "__wrapped__", None)
    return instances


def _as_built(decorator: ast.Call, instance: Any, scope: dict[str, Any]) -> None:
    """Eager builds a decorator's autocast object once, when it decorates:
    its dtype (when not given) and cache flag (when not given) are those of
    that moment. The `with` block that stands for it gets them as
    arguments (the dtype where `torch` names the torch module in the
    function's scope)."""
    given = {keyword.arg for keyword in decorator.keywords}
    positional = len(decorator.args)
    # torch.autocast(device_type, dtype, enabled, cache_enabled);
    # torch.cpu.amp.autocast / torch.cuda.amp.autocast(enabled, dtype, cache_enabled)
    per_device = type(instance).__module__.startswith(("torch.cpu.amp", "torch.cuda.amp"))
    if "cache_enabled" not in given and positional < (3 if per_device else 4):
        decorator.keywords.append(ast.keyword(arg="cache_enabled", value=ast.Constant(bool(instance._cache_enabled))))
    if ("dtype" not in given and positional < 2 and scope.get("torch") is torch
            and isinstance(instance.fast_dtype, torch.dtype)):
        name = str(instance.fast_dtype).split(".")[-1]
        decorator.keywords.append(ast.keyword(
            arg="dtype", value=ast.Attribute(value=ast.Name(id="torch", ctx=ast.Load()), attr=name, ctx=ast.Load())))
    ast.fix_missing_locations(decorator)


def _wrap_body(fn_def: ast.FunctionDef, scope: dict[str, Any], instances: list[Any]) -> bool:
    """Autocast decorators of fn_def to `with` statements around its body;
    `instances`: their objects as eager built them, outermost first (or [])."""
    kept, scopes = [], []
    for decorator in fn_def.decorator_list:
        (scopes if _is_autocast_call(decorator, scope) else kept).append(decorator)
    if not scopes:
        return False
    if len(instances) == len(scopes):
        for decorator, instance in zip(scopes, instances):
            _as_built(decorator, instance, scope)
    body = fn_def.body
    for decorator in reversed(scopes):  # the lowest decorator is innermost
        with_ = ast.With(items=[ast.withitem(context_expr=decorator, optional_vars=None)], body=body)
        ast.copy_location(with_, decorator)
        with_.end_lineno, with_.end_col_offset = body[-1].end_lineno, body[-1].end_col_offset
        body = [with_]
    fn_def.body = body
    fn_def.decorator_list = kept
    return True


def _prepared(fn: Any, fn_def: ast.FunctionDef) -> None:
    """What TorchScript's parser gets while jitamp is enabled: autocast
    decorators as `with` blocks, autocast blocks left early as scope ops."""
    scope = _scope_of(fn)
    if fn_def.decorator_list:
        _wrap_body(fn_def, scope, _decorating_instances(fn))
    _early_exits.lower_early_exits(fn_def, lambda expr: _is_autocast_call(expr, scope))


def early_exit_error(obj: Any) -> RuntimeError:
    """TorchScript's internal assert on a `with` block and an early exit that
    jitamp did not lower, as an error that says so and names the lines."""
    functions = [obj] if inspect.isfunction(obj) or inspect.ismethod(obj) else [
        member for _, member in inspect.getmembers(type(obj) if isinstance(obj, torch.nn.Module) else obj,
                                                   inspect.isfunction)]
    where = ""
    for fn in functions:
        try:
            lines, start = inspect.getsourcelines(inspect.unwrap(fn))
            tree = ast.parse(textwrap.dedent("".join(lines)))
        except (OSError, TypeError, SyntaxError):
            continue
        if not isinstance(tree.body[0], ast.FunctionDef):
            continue
        _prepared(fn, tree.body[0])
        pair = _early_exits.refused_pair(tree.body[0])
        if pair is not None:
            exit_, with_ = pair
            kind = type(exit_).__name__.lower()
            file = inspect.getsourcefile(fn)
            where = (f" (`{kind}` at {file}:{start + exit_.lineno - 1}, in {fn.__qualname__}; the `with` "
                     f"block at line {start + with_.lineno - 1})")
            break
    return RuntimeError(
        "TorchScript cannot compile a `with` block left early by a `return`, `break` or `continue`, or "
        f"after one{where}: its front end fails with an internal assert "
        f"({_early_exits.EARLY_EXIT_ASSERT}). jitamp compiles those of `with torch.autocast(...)` "
        "blocks (any spelling of autocast, called in the `with` statement), not of other context "
        "managers or of an autocast object made earlier; to script this one, assign the result inside "
        "the block and return (or break) after it."
    )


def _is_autocast_decorated(obj: Any) -> bool:
    return (
        inspect.isfunction(obj)
        and getattr(obj, "__script_unsupported", None) == _UNSUPPORTED
        and hasattr(obj, "__wrapped__")
    )


def parsing_scopes(parse_def: Callable[..., Any]) -> Callable[..., Any]:
    """torch.jit.frontend.parse_def while jitamp is enabled (jitamp/_patches.py):
    the function's AST with autocast decorators as `with` blocks and
    autocast blocks left early as scope ops (_prepared)."""

    def parse_def_with_scopes(fn: Any) -> Any:
        parsed = parse_def(fn)
        fn_def = parsed.ast.body[0]
        if isinstance(fn_def, ast.FunctionDef):
            _prepared(fn, fn_def)
        return parsed

    return parse_def_with_scopes


def scripting_decorated(script: Callable[..., Any]) -> Callable[..., Any]:
    """torch.jit.script while jitamp is enabled (jitamp/_patches.py): an
    autocast-decorated function scripts as the function it decorates, and
    TorchScript's internal assert on an early exit it could not compile
    becomes an error that names it (early_exit_error)."""

    def script_decorated(obj: Any, *args: Any, **kwargs: Any) -> Any:
        if _is_autocast_decorated(obj):
            # The decorated function's source carries the decorators; its
            # names resolve in its own globals and closure, not the
            # wrapper's (torch.amp's).
            kwargs.pop("_rcb", None)
            obj = inspect.unwrap(obj)
        try:
            return script(obj, *args, **kwargs)
        except RuntimeError as error:
            if _early_exits.EARLY_EXIT_ASSERT in str(error):
                raise early_exit_error(obj) from error
            raise

    script_decorated.__doc__ = script.__doc__
    script_decorated.__wrapped__ = script  # type: ignore[attr-defined]
    return script_decorated
