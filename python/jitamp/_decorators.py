"""`@torch.autocast(...)` as a decorator, in scripted code.

Eager runs a decorated function as if its body were inside
`with torch.autocast(...):`. TorchScript refuses the decorated function
("@autocast() decorator is not supported in script mode") when it is
scripted or called from scripted code, and compiles a decorated method
(`forward`) without its autocast. While jitamp is enabled:

- TorchScript's parser (`torch.jit.frontend.parse_def`) gets the function's
  AST with each autocast decorator turned into a `with` around the body
  (decorators apply bottom-up, so the lowest is the innermost scope); the
  pass then lowers those scopes like any other;
- `torch.jit.script` given an autocast-decorated function (directly, or
  for a callee of scripted code) scripts the function it decorates, whose
  source carries the decorators.

A decorator is an autocast one when it is a call of a name that resolves, in
the function's globals, to an autocast class (torch.autocast,
torch.amp.autocast, torch.cpu.amp.autocast, torch.cuda.amp.autocast).
"""
from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any, Callable

import torch
import torch.jit.frontend as _frontend
from torch.amp.autocast_mode import autocast as _autocast

_UNSUPPORTED = "@autocast() decorator is not supported in script mode"


def _resolve(node: ast.expr, scope: dict[str, Any]) -> Any:
    """The object a Name / Attribute chain names in `scope`, or None."""
    if isinstance(node, ast.Name):
        return scope.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, scope)
        return getattr(base, node.attr, None) if base is not None else None
    return None


def _is_autocast_decorator(decorator: ast.expr, scope: dict[str, Any]) -> bool:
    if not isinstance(decorator, ast.Call):
        return False
    target = _resolve(decorator.func, scope)
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


def _wrap_body(fn_def: ast.FunctionDef, scope: dict[str, Any]) -> bool:
    """Autocast decorators of fn_def to `with` statements around its body."""
    kept, scopes = [], []
    for decorator in fn_def.decorator_list:
        (scopes if _is_autocast_decorator(decorator, scope) else kept).append(decorator)
    if not scopes:
        return False
    body = fn_def.body
    for decorator in reversed(scopes):  # the lowest decorator is innermost
        with_ = ast.With(items=[ast.withitem(context_expr=decorator, optional_vars=None)], body=body)
        ast.copy_location(with_, decorator)
        with_.end_lineno, with_.end_col_offset = body[-1].end_lineno, body[-1].end_col_offset
        body = [with_]
    fn_def.body = body
    fn_def.decorator_list = kept
    return True


# TorchScript's front end fails with this internal assert on a `return`,
# `break` or `continue` that leaves a `with` block early.
_EARLY_EXIT_ASSERT = "outputs_[i]->uses().empty()"


def _exits_inside_with(tree: ast.AST) -> list[ast.stmt]:
    """`return` / `break` / `continue` statements that leave a `with` block
    (a return that is the block's last statement, in a block that ends its
    function, does not count: TorchScript compiles that)."""
    found: list[ast.stmt] = []

    def visit(node: ast.AST, in_with: bool, in_loop_in_with: bool, tail: bool) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)) and in_with:
            return
        if isinstance(node, ast.Return) and in_with and not tail:
            found.append(node)
        if isinstance(node, (ast.Break, ast.Continue)) and in_with and not in_loop_in_with:
            found.append(node)
        for field, value in ast.iter_fields(node):
            if not isinstance(value, list):
                if isinstance(value, ast.AST):
                    visit(value, in_with, in_loop_in_with, False)
                continue
            for index, child in enumerate(value):
                if not isinstance(child, ast.AST):
                    continue
                last = index == len(value) - 1
                if isinstance(node, ast.FunctionDef) and field == "body":
                    visit(child, in_with, in_loop_in_with, last)
                elif isinstance(node, ast.With) and field == "body":
                    visit(child, True, False, tail and last)
                elif isinstance(node, (ast.For, ast.While)) and field in ("body", "orelse"):
                    visit(child, in_with, in_with, False)
                else:
                    visit(child, in_with, in_loop_in_with, False)

    visit(tree, False, False, False)
    return found


def _early_exit_error(obj: Any) -> RuntimeError:
    """TorchScript's internal assert on an early exit from a `with` block, as
    an error that says so and names the line."""
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
        exits = _exits_inside_with(tree)
        if exits:
            statement = exits[0]
            kind = type(statement).__name__.lower()
            where = f" (`{kind}` at {inspect.getsourcefile(fn)}:{start + statement.lineno - 1}, in {fn.__qualname__})"
            break
    return RuntimeError(
        "TorchScript cannot compile a `return`, `break` or `continue` that leaves a `with` block early"
        f"{where}: its front end fails with an internal assert ({_EARLY_EXIT_ASSERT}). Eager runs "
        "it; to script it, assign the result inside the block and return (or break) after it. (A "
        "`with` block that ends the function may return anywhere inside, and so may a function "
        "decorated with @torch.autocast(...).)"
    )


def _is_autocast_decorated(obj: Any) -> bool:
    return (
        inspect.isfunction(obj)
        and getattr(obj, "__script_unsupported", None) == _UNSUPPORTED
        and hasattr(obj, "__wrapped__")
    )


class Installed:
    """The patches, while jitamp is enabled; uninstall() puts torch's back."""

    def __init__(self) -> None:
        self.parse_def = _frontend.parse_def
        self.script = torch.jit.script
        parse_def, script = self.parse_def, self.script

        def parse_def_with_scopes(fn: Any) -> Any:
            parsed = parse_def(fn)
            fn_def = parsed.ast.body[0]
            if isinstance(fn_def, ast.FunctionDef) and fn_def.decorator_list:
                _wrap_body(fn_def, _scope_of(fn))
            return parsed

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
                if _EARLY_EXIT_ASSERT in str(error):
                    raise _early_exit_error(obj) from error
                raise

        script_decorated.__doc__ = script.__doc__
        script_decorated.__wrapped__ = script  # type: ignore[attr-defined]
        self.patched: list[tuple[Any, str, Callable[..., Any]]] = [
            (_frontend, "parse_def", parse_def_with_scopes),
            (torch.jit, "script", script_decorated),
        ]
        for owner, name, patch in self.patched:
            setattr(owner, name, patch)

    def uninstall(self) -> None:
        originals = {"parse_def": self.parse_def, "script": self.script}
        for owner, name, patch in self.patched:
            if getattr(owner, name) is patch:
                setattr(owner, name, originals[name])
