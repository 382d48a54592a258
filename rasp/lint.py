"""Warnings for valid RASP that probably means something else: the precedence traps.

RASP keeps the original's operator order (docs/language.md, section 4.1), and a reader who knows
Python or school algebra groups some expressions differently: `not tokens == "b"` is
`(not tokens) == "b"` (false at every position), `tokens == "a" or "b"` is
`(tokens == "a") or "b"` (true at every position), `a or b and c` is `(a or b) and c`, `a < b < c`
is `(a < b) < c`, `a % b * c` is `a % (b * c)`, `2 ^ 3 ^ 2` is `(2 ^ 3) ^ 2`, `-x ^ 2` is `(-x) ^ 2`,
`x in xs and y` is `x in (xs and y)`, and `a if b else c if d else e` is
`(a if b else c) if d else e`. `lint` finds each of these in a parsed program and says both
readings; it never changes what the program means.

A warning is silenced by writing the grouping with parentheses, `(not tokens) == "b"`, or, for a
literal in `and`/`or`, by parenthesising the literal: `x == 1 or (2)`. The checks read only the
syntax tree and the source text (a parenthesised operand's span excludes its parentheses: the text
between it and its operator holds them).
"""

from __future__ import annotations

import dataclasses
import re
from collections import deque
from collections.abc import Iterable, Iterator
from typing import get_args

from rasp import ast
from rasp.errors import Diagnostic, Span
from rasp.lint_calls import call_warnings
from rasp.lint_scope import Holds, indicator_reads

_B = ast.BinaryOp
_COMPARISONS = frozenset({_B.EQ, _B.NE, _B.LE, _B.GE, _B.LT, _B.GT, _B.IN})

# How tightly Python binds each operator (higher: tighter); RASP's own order is the grammar's.
_PYTHON_LEVEL = {
    _B.OR: 2,
    _B.AND: 3,
    **dict.fromkeys(_COMPARISONS, 5),
    _B.ADD: 8,
    _B.SUB: 8,
    _B.MUL: 9,
    _B.DIV: 9,
    _B.MOD: 9,
    _B.POW: 11,
}
_NOT_LEVEL = 4  # Python's `not x`
_SIGN_LEVEL = 10  # Python's `-x`, looser than `**` on its right
_TERNARY_LEVEL = 1

_COMMENT = re.compile(r"#[^\n]*")
_NODE_TYPES = (*get_args(ast.Expr), *get_args(ast.Stmt))


def lint(statements: Iterable[ast.Stmt], holds: Holds | None = None) -> tuple[Diagnostic, ...]:
    """The precedence warnings of `statements` (a `def`'s and a loop's bodies included), and the
    calls' (rasp.lint_calls: `indicator(tokens)`, a note on `round(x / 2)`), in source order,
    each a `Diagnostic` of severity "warning" (the round's "note"). `holds`: which built-in s-op
    each name held before `statements` (rasp.lint_scope; the REPL's session so far)."""
    found: dict[tuple[int, int, str], Diagnostic] = {}
    statements = tuple(statements)
    reads = indicator_reads(statements, holds)  # (the built-in each `indicator(NAME)` reads)
    for node, parent in _walk(statements):
        calls = call_warnings(node, reads.get(id(node))) if isinstance(node, ast.Unary) else ()
        for diagnostic in (*_check(node, parent), *calls):
            span = diagnostic.span  # (each check locates its warning)
            where = (0, 0) if span is None else (span.line, span.col)
            found.setdefault((*where, diagnostic.message), diagnostic)
    return tuple(found[key] for key in sorted(found))


def _walk(statements: Iterable[ast.Stmt]) -> Iterator[tuple[object, object | None]]:
    """Every node under `statements` with its parent, without recursion (a flat sum of 5,000
    terms is 5,000 deep)."""
    stack: list[tuple[object, object | None]] = [(s, None) for s in reversed(tuple(statements))]
    while stack:
        node, parent = stack.pop()
        yield node, parent
        stack.extend((child, node) for child in reversed(list(_children(node))))


def _children(node: object) -> Iterator[object]:
    for field in dataclasses.fields(node):  # type: ignore[arg-type]
        yield from _nodes_in(getattr(node, field.name))


def _nodes_in(value: object) -> Iterator[object]:
    if isinstance(value, _NODE_TYPES):
        yield value
    elif isinstance(value, tuple):
        for item in value:
            yield from _nodes_in(item)


# ---- the checks -------------------------------------------------------------------------------


def _check(node: object, parent: object | None) -> Iterator[Diagnostic]:
    if isinstance(node, ast.Binary):
        yield from _binary_left(node)
        yield from _binary_right(node)
        literal = _literal_operand(node, parent)
        if literal is not None:
            yield literal
    elif isinstance(node, ast.Ternary) and isinstance(node.then, ast.Ternary):
        inner = node.then
        if not _closed_before(inner.span, node.cond.span):
            a, b, c = _text(inner.then.span), _text(inner.cond.span), _text(inner.orelse.span)
            d, e = _text(node.cond.span), _text(node.orelse.span)
            yield _warning(
                node.span,
                "a conditional groups to the left in RASP: this is "
                f"({a} if {b} else {c}) if {d} else {e}",
                f"write {a} if {b} else ({c} if {d} else {e}) to choose by {d} only where {b} "
                "is false (Python's reading)",
                f"({a} if {b} else {c}) if {d} else {e}",
            )


def _binary_left(node: ast.Binary) -> Iterator[Diagnostic]:
    """`node`'s left operand, unparenthesised, that Python would not group as RASP does."""
    left, op = node.left, node.op
    if _closed_before(left.span, node.op_span):
        return
    right = _right_text(node)
    if isinstance(left, ast.Unary) and left.op in (ast.UnaryOp.NOT, ast.UnaryOp.NEG):
        level = _NOT_LEVEL if left.op is ast.UnaryOp.NOT else _SIGN_LEVEL
        if level >= _PYTHON_LEVEL[op]:
            return
        word = left.op.value
        operand = _operand_text(left)
        space = " " if left.op is ast.UnaryOp.NOT else ""
        kept = f"({word}{space}{operand}) {op.value} {right}"
        message = f"'{word}' applies to {operand} alone: this is {kept}"
        if left.op is ast.UnaryOp.NOT and _never_bool(op, node.right):
            message += ", " + ("true" if op is _B.NE else "false") + " at every position"
        meant = f"{word}{space}({operand} {op.value} {right})"
        if left.op is ast.UnaryOp.NOT and op in (_B.EQ, _B.NE):
            other = "!=" if op is _B.EQ else "=="
            meant += f" (or {operand} {other} {right})"
        yield _warning(node.span, message, f"write {meant}", kept)
    elif isinstance(left, ast.Binary):
        inner, outer = _PYTHON_LEVEL[left.op], _PYTHON_LEVEL[op]
        chained = inner == outer and op in _COMPARISONS
        power = inner == outer and op is _B.POW  # Python's `**` groups to the right
        if inner > outer and not chained or inner == outer and not (chained or power):
            return
        a, b = _left_text(left), _right_text(left)
        kept = f"({a} {left.op.value} {b}) {op.value} {right}"
        if chained:
            message = (
                f"comparisons do not chain in RASP: this is {kept}, which applies "
                f"{op.value} to the result of {a} {left.op.value} {b}"
            )
            meant = f"{_test(a, left.op, b)} and {_test(b, op, right)}"
        else:
            message = f"{_why(left.op, op)}: this is {kept}"
            meant = f"{a} {left.op.value} {_grouped(left.right, b, op, right, left.op)}"
        yield _warning(node.span, message, f"write {meant}", kept)
    elif isinstance(left, ast.Ternary) and _TERNARY_LEVEL < _PYTHON_LEVEL[op]:
        a, b, c = _text(left.then.span), _text(left.cond.span), _text(left.orelse.span)
        kept = f"({a} if {b} else {c}) {op.value} {right}"
        yield _warning(
            node.span,
            f"'{op.value}' is looser than a conditional in RASP: this is {kept}",
            f"write {a} if {b} else ({c} {op.value} {right})",
            kept,
        )


def _binary_right(node: ast.Binary) -> Iterator[Diagnostic]:
    """`node`'s right operand, unparenthesised, that Python would not group as RASP does (only
    `%` over `*` and `/`, and `in` over anything looser than arithmetic, can hold one)."""
    right, op = node.right, node.op
    if _opened_after(node.op_span, right.span):
        return
    left = _left_text(node)
    if isinstance(right, ast.Binary):
        inner, outer = _PYTHON_LEVEL[right.op], _PYTHON_LEVEL[op]
        if inner > outer:
            return
        a, b = _left_text(right), _right_text(right)
        kept = f"{left} {op.value} ({a} {right.op.value} {b})"
        if inner == outer and op in _COMPARISONS:
            message = (
                f"comparisons do not chain in RASP: this is {kept}, which applies {op.value} "
                f"to the result of {a} {right.op.value} {b}"
            )
            meant = f"{_test(left, op, a)} and {_test(a, right.op, b)}"
        else:
            message = f"{_why(op, right.op)}: this is {kept}"
            meant = f"({left} {op.value} {a}) {right.op.value} {b}"
        yield _warning(node.span, message, f"write {meant}", kept)
    elif isinstance(right, ast.Ternary):
        a, b, c = _text(right.then.span), _text(right.cond.span), _text(right.orelse.span)
        kept = f"{left} {op.value} ({a} if {b} else {c})"
        yield _warning(
            node.span,
            f"'{op.value}' is looser than a conditional in RASP: this is {kept}",
            f"write ({left} {op.value} {a}) if {b} else {c}",
            kept,
        )


def _grouped(node: object, text: str, op: ast.BinaryOp, right: str, outer: ast.BinaryOp) -> str:
    """`text op right` in parentheses, as Python groups it under `outer`; a `not x` there is
    written `not (x op right)`, which Python's `not x op right` means."""
    if isinstance(node, ast.Unary) and node.op is ast.UnaryOp.NOT and text.startswith("not"):
        if _NOT_LEVEL < _PYTHON_LEVEL[op]:
            inner = f"not ({_operand_text(node)} {op.value} {right})"
            return inner if outer in (_B.AND, _B.OR) else f"({inner})"
    return f"({text} {op.value} {right})"


def _test(left: str, op: ast.BinaryOp, right: str) -> str:
    """One comparison of a chain as Python reads it, to join with `and` (`in` is looser)."""
    return f"({left} in {right})" if op is _B.IN else f"{left} {op.value} {right}"


def _why(looser: ast.BinaryOp, tighter: ast.BinaryOp) -> str:
    """Why RASP grouped `looser` first where Python groups `tighter` first."""
    if {looser, tighter} == {_B.AND, _B.OR}:
        return "'and' and 'or' are one level in RASP, read left to right"
    if looser is _B.IN or tighter is _B.IN:
        return "'in' is looser than every other operator in RASP"
    if looser is _B.POW and tighter is _B.POW:
        return "'^' groups to the left in RASP"
    if looser is _B.MOD:
        return f"'%' is looser than '{tighter.value}' in RASP"
    return f"'{looser.value}' is looser than '{tighter.value}' in RASP"  # (not reached today)


def _literal_operand(node: ast.Binary, parent: object | None) -> Diagnostic | None:
    """`tokens == "a" or "b"`: a string or number beside a condition in `and`/`or` is compared
    with nothing, so the `and`/`or` is constant or does nothing."""
    if node.op not in (_B.AND, _B.OR):
        return None
    pairs = ((node.right, node.left, True), (node.left, node.right, False))
    for literal, condition, on_right in pairs:
        value = _literal_value(literal)
        if value is None or not _is_condition(condition):
            continue
        if on_right and _opened_after(node.op_span, literal.span):
            return None  # `x == 1 or (2)`: meant
        if not on_right and _closed_before(literal.span, node.op_span):
            return None
        if _and_or_idiom(node, parent):
            return None  # `c and "yes" or "no"`, Python's conditional before it had one
        shown, op = _text(literal.span), node.op.value
        cond = _left_text(node) if on_right else _right_text(node)
        wrapped = (
            _closed_before(condition.span, node.op_span)
            if on_right
            else _opened_after(node.op_span, condition.span)
        )
        grouped = cond if wrapped else f"({cond})"
        whole = f"{grouped} {op} {shown}" if on_right else f"{shown} {op} {grouped}"
        kept = f"{cond} {op} ({shown})" if on_right else f"({shown}) {op} {cond}"
        truthy = bool(value)
        if (node.op is _B.OR) == truthy:
            result = ("true" if truthy else "false") + " at every position"
        else:
            result = f"the same as {cond}"
        message = f"{shown} is compared with nothing: this is {whole}, {result}"
        return _warning(node.span, message, _compare_hint(condition, node.op, shown), kept)
    return None


def _compare_hint(condition: object, op: ast.BinaryOp, shown: str) -> str:
    if isinstance(condition, ast.Binary) and condition.op in _COMPARISONS - {_B.IN}:
        subject = _left_text(condition)
        hint = f"write {_text(condition.span)} {op.value} {subject} {condition.op.value} {shown}"
        if op is _B.OR and condition.op is _B.EQ and _literal_value(condition.right) is not None:
            hint += f" (or {subject} in [{_right_text(condition)}, {shown}])"
        elif op is _B.AND and condition.op is _B.NE and _literal_value(condition.right) is not None:
            hint += f" (or not ({subject} in [{_right_text(condition)}, {shown}]))"
        return hint
    return f"compare {shown} with something, or write True or False for a constant"


def _and_or_idiom(node: ast.Binary, parent: object | None) -> bool:
    """`c and L1 or L2` (either of its two `and`/`or` nodes), both literals on the right."""
    if node.op is _B.OR and _literal_value(node.right) is not None:
        left = node.left
        return (
            isinstance(left, ast.Binary)
            and left.op is _B.AND
            and _literal_value(left.right) is not None
        )
    if node.op is _B.AND and isinstance(parent, ast.Binary) and parent.left is node:
        return parent.op is _B.OR and _literal_value(parent.right) is not None
    return False


def _is_condition(node: object) -> bool:
    """An expression that reads as a yes/no question (a comparison, `in`, `not`, or `and`/`or`
    of such): not a name or an atom, which may mean a value. Looks at most `_LOOK` nodes deep
    into `and`/`or` (without recursion: a chain of thousands, each link asking, stays linear)."""
    queue = deque([node])  # (nearest first)
    for _ in range(_LOOK):
        if not queue:
            return False
        item = queue.popleft()
        if isinstance(item, ast.Unary) and item.op is ast.UnaryOp.NOT:
            return True
        if isinstance(item, ast.Binary):
            if item.op not in (_B.AND, _B.OR):
                return item.op in _COMPARISONS
            queue += [item.left, item.right]
    return False


_LOOK = 64


def _literal_value(node: object) -> int | float | str | None:
    if isinstance(node, ast.Literal):
        return node.value
    if isinstance(node, ast.Unary) and node.op in (ast.UnaryOp.NEG, ast.UnaryOp.POS):
        inner = node.operand
        if isinstance(inner, ast.Literal) and not isinstance(inner.value, str):
            return -inner.value if node.op is ast.UnaryOp.NEG else inner.value
    return None


def _never_bool(op: ast.BinaryOp, node: object) -> bool:
    """`(not x) op node` is constant: a bool never equals a string, nor is in a list of them."""
    if op in (_B.EQ, _B.NE):
        return _is_string(node)
    items = node.items if isinstance(node, ast.ListLit) else ()
    return op is _B.IN and bool(items) and all(_is_string(item) for item in items)


def _is_string(node: object) -> bool:
    return isinstance(node, ast.Literal) and isinstance(node.value, str)


# ---- source text -------------------------------------------------------------------------------


def _warning(span: Span, message: str, hint: str, kept: str) -> Diagnostic:
    hint += f"; {kept} keeps this meaning without the warning"
    return Diagnostic(message, span, hint, severity="warning")


def _between(start: Span, end: Span) -> str:
    """The source text from the end of `start` to the start of `end`, comments dropped."""
    gap = Span(start.source, start.end_line, start.end_col, end.line, end.col).text()
    return _COMMENT.sub("", gap)


def _closed_before(operand: Span, following: Span) -> bool:
    """A left operand written in parentheses: a `)` between it and what follows it."""
    return ")" in _between(operand, following)


def _opened_after(preceding: Span, operand: Span) -> bool:
    return "(" in _between(preceding, operand)


def _text(span: Span) -> str:
    return " ".join(span.text().split())


def _left_text(node: ast.Binary) -> str:
    """The left operand as written, its parentheses included."""
    return " ".join(
        Span(node.span.source, node.span.line, node.span.col, node.op_span.line, node.op_span.col)
        .text()
        .split()
    )


def _right_text(node: ast.Binary) -> str:
    span = node.span
    return " ".join(
        Span(span.source, node.op_span.end_line, node.op_span.end_col, span.end_line, span.end_col)
        .text()
        .split()
    )


def _operand_text(node: ast.Unary) -> str:
    """A prefix operator's operand as written (`not (a or b)`: `(a or b)`)."""
    return _text(node.span).removeprefix(node.op.value).strip()
