"""Which built-in s-op each `indicator(NAME)` reads, from the program's own assignments in order.

The lint reads the syntax alone, so it follows names as the statements bind them: after
`t = tokens;`, `indicator(t)` reads `tokens`; after `tokens = tokens == "a";`, `indicator(tokens)`
reads a bool s-op, not the built-in. A file is read top to bottom; the REPL passes what its session
holds so far (`session_holds`), so that a statement typed there is warned as the same statement in a
file would be.

Where the syntax cannot tell, the lint says nothing: a `for` body's names are unknown where an
earlier iteration may have bound them; a `def`'s body is run when it is called, so in it only a
built-in's own name is read, and only where no statement of the program (or the session so far)
binds that name; parameters and comprehension variables hold unknown values.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, get_args

from rasp import ast
from rasp.lint_calls import TRUTH, bound_names
from rasp.sops import IndicesSOp, LengthSOp, TokenKind, TokensSOp

# name -> the built-in s-op it holds (a key of TRUTH), or None where it holds anything else
Holds = Mapping[str, str | None]

_EXPRESSIONS = get_args(ast.Expr)
_ALIKE = {"tokens_str": "tokens"}  # one s-op under two names
_TOKENS = {TokenKind.STR: "tokens", TokenKind.INT: "tokens_int", TokenKind.FLOAT: "tokens_float"}


def held(name: str, holds: Holds) -> str | None:
    """The built-in `name` holds: what `holds` says, else the built-in of that name."""
    if name in holds:
        return holds[name]
    return name if name in TRUTH else None


def session_holds(
    statements: Iterable[ast.Stmt], lookup: Callable[[str], Any]
) -> dict[str, str | None]:
    """What the names `statements` mention hold in a session (the REPL's: a loaded file's names
    and a loop's too), by their values (`lookup(name)`, None where unbound): `tokens_str` is
    `tokens`, and so is a name assigned either. Only the names mentioned: a long session's
    thousands of names are not read at each statement."""
    holds: dict[str, str | None] = {}
    for name in _names_in(statements):
        value = lookup(name)
        built_in = None
        if isinstance(value, TokensSOp):
            built_in = _TOKENS.get(value.kind)
        elif isinstance(value, IndicesSOp):
            built_in = "indices"
        elif isinstance(value, LengthSOp):
            built_in = "length"
        # (`tokens_str` is `tokens`: the built-in's own name, as a file's lint reads it)
        holds[name] = name if built_in == _ALIKE.get(name, name) and name in TRUTH else built_in
    return holds


def _names_in(statements: Iterable[ast.Stmt]) -> set[str]:
    names: set[str] = set()
    stack: list[Any] = list(statements)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name):
            names.add(node.name)
        stack.extend(_expressions(node))
        stack.extend(getattr(node, "body", ()))
    return names


def indicator_reads(
    statements: Iterable[ast.Stmt], holds: Holds | None = None
) -> dict[int, tuple[str, str]]:
    """For each `indicator(NAME)` in `statements` (by id) whose NAME holds a built-in there: (NAME,
    the built-in). `holds`: what the names hold before the statements (a REPL session's)."""
    statements = tuple(statements)
    reads: dict[int, tuple[str, str]] = {}
    _run(statements, dict(holds or {}), bound_names(statements), reads)
    return reads


def _run(
    statements: Iterable[ast.Stmt],
    holds: dict[str, str | None],
    rebound: frozenset[str],
    reads: dict[int, tuple[str, str]],
) -> None:
    """Walk `statements` in order, updating `holds` as each binds names."""
    for stmt in statements:
        match stmt:
            case ast.Assign(targets=targets, values=values):
                _read(values, holds, reads)
                if len(targets) == len(values):
                    sources = [_alias(v, holds) for v in values]
                else:  # `a, b = f();`
                    sources = [None] * len(targets)
                for target, source in zip(targets, sources, strict=True):
                    holds[target] = source
            case ast.For(targets=targets, iterable=iterable, body=body):
                _read((iterable,), holds, reads)
                assigned = set(targets) | bound_names(body)
                inner = {**holds, **dict.fromkeys(assigned)}  # (an earlier iteration's values)
                _run(body, inner, rebound, reads)
                for name in assigned:  # the same after no iteration and after one: known
                    holds[name] = inner[name] if inner[name] == held(name, holds) else None
            case ast.FuncDef(name=name, params=params, body=body, returns=returns):
                # run when called: only a built-in's own name, bound nowhere in the program
                inner = {n: None for n in holds if held(n, holds) != n}
                inner.update(dict.fromkeys(rebound))
                inner.update(dict.fromkeys((*params, *bound_names(body))))
                _run(body, inner, rebound, reads)
                _read(returns, inner, reads)
                holds[name] = None
            case _:
                _read(_expressions(stmt), holds, reads)


def _alias(value: ast.Expr, holds: Holds) -> str | None:
    """What a name assigned `value` holds (`t = tokens_str;`: `tokens`, as a session's value)."""
    built_in = held(value.name, holds) if isinstance(value, ast.Name) else None
    return _ALIKE.get(built_in, built_in) if built_in is not None else None


def _read(exprs: Iterable[Any], holds: Holds, reads: dict[int, tuple[str, str]]) -> None:
    """Record the `indicator(NAME)` calls in `exprs` (a comprehension's variables hide names)."""
    stack: list[tuple[Any, Holds]] = [(e, holds) for e in exprs]
    while stack:
        node, scope = stack.pop()
        if (
            isinstance(node, ast.Unary)
            and node.op is ast.UnaryOp.INDICATOR
            and isinstance(node.operand, ast.Name)
        ):
            built_in = held(node.operand.name, scope)
            if built_in is not None:
                reads[id(node)] = (node.operand.name, built_in)
        if isinstance(node, ast.ListComp | ast.DictComp):
            stack.append((node.iterable, scope))
            inner = {**scope, **dict.fromkeys(node.targets)}
            parts = (node.element,) if isinstance(node, ast.ListComp) else (node.key, node.value)
            stack.extend((part, inner) for part in parts)
            continue
        stack.extend((child, scope) for child in _expressions(node))


def _expressions(node: Any) -> Iterator[Any]:
    """The expressions directly under `node` (a statement's or an expression's)."""
    for field in dataclasses.fields(node):
        yield from _in(getattr(node, field.name))


def _in(value: Any) -> Iterator[Any]:
    if isinstance(value, _EXPRESSIONS):
        yield value
    elif isinstance(value, tuple):  # (a body's statements are no expressions: skipped)
        for item in value:
            yield from _in(item)
