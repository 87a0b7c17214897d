"""`return`, `break` and `continue` in functions with autocast `with` blocks.

Eager runs them; TorchScript's front end fails with an internal assert
(EARLY_EXIT_ASSERT) on a `with` block that such an exit leaves, or that
follows one in the code its exit transform moves (measured on 2.13:
`if flag: return x` before any `with` block fails). While jitamp is
enabled, TorchScript's parser (see _decorators.parsing_scopes) gets each
function that has an early exit with its autocast blocks spelled as
jitamp's scope ops, which the pass would have lowered them to anyway:

    with torch.autocast(...) as ac:      ac = torch.autocast(...)
        ...                              _jitamp_scope_1 = _jitamp_autocast_enter(ac)[0]
        if c:                            ...
            return f(y)          ->      if c:
        ...                                  _jitamp_return_2 = f(y)
                                             _jitamp_autocast_exit(_jitamp_scope_1)
                                             return _jitamp_return_2
                                         ...
                                         _jitamp_autocast_exit(_jitamp_scope_1)

The exits are then TorchScript's ordinary early returns and loop exits. A
`return` evaluates its value inside the scopes it leaves, then exits them,
innermost first; a `break` / `continue` exits the scopes opened inside its
loop. An exception that leaves the block closes the scope through the
guard's destructor, as eager's `__exit__` would. `_jitamp_autocast_enter`
and `_jitamp_autocast_exit` are `torch.ops.jitamp.autocast_enter` / `exit`,
bound in `builtins` while jitamp is enabled (jitamp/_patches.py; every
TorchScript resolution callback looks there last).

A block is lowered when each of its items is a call that resolves (in the
function's globals and closure) to an autocast class, or a local name that
only such calls (or `as` targets of such blocks) bind, and its `as` target,
if any, is a name (eager's `__enter__` returns the object from torch 2.5 on;
before, it returns None, and such a block is left as it is). Other blocks
(`torch.no_grad()`, an autocast chosen by an expression) in a function
with an early exit may still fail in
TorchScript's front end; that failure becomes an error that names the exit,
the block and their lines (_decorators.early_exit_error).
"""
from __future__ import annotations

import ast
from typing import Any, Callable

import torch

from ._library import EAGER_ENTER_RETURNS_NONE

# The names the rewritten code calls jitamp's scope ops by (plain names:
# TorchScript's front end reads an attribute's position from the source).
SCOPE_OPS = {"autocast_enter": "_jitamp_autocast_enter", "autocast_exit": "_jitamp_autocast_exit"}

# TorchScript's front end fails with this internal assert on a `with` block
# that a `return`, `break` or `continue` leaves early, or that follows one.
EARLY_EXIT_ASSERT = "outputs_[i]->uses().empty()"

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_LOOPS = (ast.For, ast.While)
_JUMPS = (ast.Return, ast.Break, ast.Continue, ast.Raise)


def _nodes(node: ast.AST):
    """The nodes under `node` (not `node`), outside nested functions."""
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, _FUNCTIONS):
            yield child
            yield from _nodes(child)


def _statements(node: ast.AST):
    """The statements under `node` (not `node`), outside nested functions."""
    return (child for child in _nodes(node) if isinstance(child, ast.stmt))


def _tail_returns(body: list[ast.stmt]) -> set[int]:
    """The returns (by id) after which nothing of the function runs: the last
    statement of the function, of an `if` branch or `with` body in tail
    position."""
    if not body:
        return set()
    last = body[-1]
    if isinstance(last, ast.Return):
        return {id(last)}
    if isinstance(last, ast.If):
        return _tail_returns(last.body) | _tail_returns(last.orelse)
    if isinstance(last, ast.With):
        return _tail_returns(last.body)
    return set()


def early_exits(fn_def: ast.FunctionDef) -> list[ast.stmt]:
    """The function's exits that TorchScript's exit transform handles by
    moving the code after them: each `break` and `continue`, and each
    `return` but those in tail position. TorchScript's front end fails
    with EARLY_EXIT_ASSERT on a `with` block inside such an exit's block or
    among the code it moves."""
    tail = _tail_returns(fn_def.body)
    return [statement for statement in _statements(fn_def)
            if isinstance(statement, (ast.Break, ast.Continue))
            or (isinstance(statement, ast.Return) and id(statement) not in tail)]


def refused_pair(fn_def: ast.FunctionDef) -> tuple[ast.stmt, ast.With] | None:
    """An early exit and a `with` block of fn_def (as jitamp hands it to
    TorchScript) that TorchScript's front end may fail on, the exit inside
    the block preferred; None if it has no such pair."""
    exits = early_exits(fn_def)
    withs = [statement for statement in _statements(fn_def) if isinstance(statement, ast.With)]
    if not exits or not withs:
        return None
    for with_ in withs:
        inside = {id(statement) for statement in _statements(with_)}
        for exit_ in exits:
            if id(exit_) in inside:
                return exit_, with_
    return exits[0], withs[0]


def _autocast_names(fn_def: ast.FunctionDef, is_autocast_call: Callable[[ast.expr], bool],
                    enter_returns_none: bool) -> set[str]:
    """The local names that only ever hold an autocast object: bound only by
    `name = <autocast call>` or `with <autocast call> as name` (where eager's
    `__enter__` returns the object)."""
    autocast_bindings: set[int] = set()
    for node in _statements(fn_def):
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and is_autocast_call(node.value)):
            autocast_bindings.add(id(node.targets[0]))
        if isinstance(node, ast.With) and not enter_returns_none:
            for item in node.items:
                if isinstance(item.optional_vars, ast.Name) and is_autocast_call(item.context_expr):
                    autocast_bindings.add(id(item.optional_vars))
    names = {argument.arg: False for argument in ast.walk(fn_def.args) if isinstance(argument, ast.arg)}
    for name in _nodes(fn_def):
        if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Store):
            names[name.id] = names.get(name.id, True) and id(name) in autocast_bindings
    return {name for name, only_autocast in names.items() if only_autocast}


class _Lowering:
    """Rewrites a function body's autocast blocks."""

    def __init__(self, is_autocast_call: Callable[[ast.expr], bool], enter_returns_none: bool,
                 autocast_names: set[str]):
        self.is_autocast_call = is_autocast_call
        self.enter_returns_none = enter_returns_none
        self.autocast_names = autocast_names
        self.count = 0
        self.changed = False
        # The guards of the lowered blocks open here, with the loop depth
        # each was opened at, outermost first.
        self.open: list[tuple[str, int]] = []
        self.loops = 0

    def lowerable(self, with_: ast.With) -> bool:
        for item in with_.items:
            expr = item.context_expr
            if not (self.is_autocast_call(expr)
                    or isinstance(expr, ast.Name) and expr.id in self.autocast_names):
                return False
            if item.optional_vars is not None and (
                    self.enter_returns_none or not isinstance(item.optional_vars, ast.Name)):
                return False
        return True

    def block(self, statements: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for statement in statements:
            out.extend(self.statement(statement))
        return out

    def statement(self, node: ast.stmt) -> list[ast.stmt]:
        if isinstance(node, _FUNCTIONS):
            return [node]
        if isinstance(node, ast.With) and self.lowerable(node):
            return self.lower(node)
        if isinstance(node, ast.Return) and self.open:
            return self.leave(node, [guard for guard, _ in self.open])
        if isinstance(node, (ast.Break, ast.Continue)):
            return self.leave(node, [guard for guard, depth in self.open if depth == self.loops])
        loop = isinstance(node, _LOOPS)
        for field in ("body", "orelse", "finalbody"):
            statements = getattr(node, field, None)
            if isinstance(statements, list) and statements:
                self.loops += loop and field == "body"
                setattr(node, field, self.block(statements))
                self.loops -= loop and field == "body"
        for handler in getattr(node, "handlers", ()):
            handler.body = self.block(handler.body)
        return [node]

    def lower(self, with_: ast.With) -> list[ast.stmt]:
        self.changed = True
        out: list[ast.stmt] = []
        guards = []
        for item in with_.items:
            self.count += 1
            expr = item.context_expr
            target = (item.optional_vars.id if item.optional_vars is not None
                      else expr.id if isinstance(expr, ast.Name) else f"_jitamp_autocast_{self.count}")
            guard = f"_jitamp_scope_{self.count}"
            if not (isinstance(expr, ast.Name) and expr.id == target):
                out.append(_at(with_, ast.Assign(targets=[_name(target, ast.Store())], value=expr)))
            enter = ast.Subscript(value=_scope_op("autocast_enter", target), slice=ast.Constant(0),
                                  ctx=ast.Load())
            out.append(_at(with_, ast.Assign(targets=[_name(guard, ast.Store())], value=enter)))
            guards.append(guard)
            self.open.append((guard, self.loops))
        body = self.block(with_.body)
        del self.open[-len(guards):]
        if not isinstance(body[-1], _JUMPS):
            body.extend(_exits(with_, reversed(guards)))
        return out + body

    def leave(self, node: ast.Return | ast.Break | ast.Continue, guards: list[str]) -> list[ast.stmt]:
        if not guards:
            return [node]
        exits = _exits(node, reversed(guards))
        if isinstance(node, ast.Return) and node.value is not None:
            self.count += 1
            result = f"_jitamp_return_{self.count}"
            value = _at(node, ast.Assign(targets=[_name(result, ast.Store())], value=node.value))
            return [value, *exits, _at(node, ast.Return(value=_name(result, ast.Load())))]
        return [*exits, node]


def _name(identifier: str, ctx: ast.expr_context) -> ast.Name:
    return ast.Name(id=identifier, ctx=ctx)


def _scope_op(op: str, argument: str) -> ast.Call:
    return ast.Call(func=_name(SCOPE_OPS[op], ast.Load()), args=[_name(argument, ast.Load())], keywords=[])


def _at(where: ast.AST, node: ast.stmt) -> ast.stmt:
    """`node` with the source location of `where` (TorchScript's source
    ranges and error messages point there); the new nodes under it get it
    from lower_early_exits' ast.fix_missing_locations."""
    return ast.copy_location(node, where)


def _exits(where: ast.AST, guards: Any) -> list[ast.stmt]:
    return [_at(where, ast.Expr(value=_scope_op("autocast_exit", guard))) for guard in guards]


def lower_early_exits(fn_def: ast.FunctionDef, is_autocast_call: Callable[[ast.expr], bool]) -> bool:
    """Rewrites fn_def's autocast blocks that are left early (see the module
    docstring); returns whether it changed anything."""
    if not early_exits(fn_def):
        return False
    lowering = _Lowering(is_autocast_call, EAGER_ENTER_RETURNS_NONE,
                         _autocast_names(fn_def, is_autocast_call, EAGER_ENTER_RETURNS_NONE))
    fn_def.body = lowering.block(fn_def.body)
    if lowering.changed:
        ast.fix_missing_locations(fn_def)
    return lowering.changed

