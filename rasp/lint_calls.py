"""Warnings for valid RASP calls that probably mean something else (rasp.lint's precedence traps
are the others): `indicator` of an s-op that is no bool, and `round` of a division by an even
number, which meets halves.

- `indicator(e)` is 1 where `e` is truthy and 0 elsewhere, as in the original: meant for a
  comparison (`indicator(tokens == "(")`, the paper's Dyck balance). Of the built-in `tokens` it is
  1 at every position (every token is a non-empty string), of `indices` 0 at position 0 only, of
  `length` 1 everywhere: a warning, whose hint writes the comparison that keeps the meaning
  (`indicator(tokens != "")`, which silences it). The lint reads the syntax alone, so it follows
  names as the program binds them (rasp.lint_scope): `t = tokens;` then `indicator(t)` is warned,
  `tokens = tokens == "a";` then `indicator(tokens)` is not; of any other name it cannot know the
  type.
- `round(x / 2)` rounds halves to the even neighbour, as the original's (Python's) `round`:
  `round(indices / 2)` is 0, 0, 1, 2, 2, 2, 3, 4, ..., not the floor nor half up. A note, not a
  warning: it may be meant. The hint writes the floor; `round((x / 2))` keeps the meaning without
  the note.

Neither changes what a program means.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from rasp import ast
from rasp.errors import Diagnostic, Span

_COMMENT = re.compile(r"#[^\n]*")

# the built-in s-ops that hold no bools, and the comparison that is their truthiness
TRUTH = {
    "tokens": ("strings", '!= ""', "1 at every position (every token is a non-empty string)"),
    "tokens_str": ("strings", '!= ""', "1 at every position (every token is a non-empty string)"),
    "indices": ("ints", "!= 0", "0 at position 0 and 1 at every other position"),
    "length": ("ints", "!= 0", "1 at every position (the length is never 0)"),
    "tokens_int": ("ints", "!= 0", "1 where the token is not 0"),
    "tokens_float": ("floats", "!= 0", "1 where the token is not 0"),
}


def call_warnings(node: ast.Unary, reads: tuple[str, str] | None) -> Iterator[Diagnostic]:
    """The warning of `indicator(BUILT_IN)` and the note of `round(x / EVEN)`; `reads`: for an
    `indicator(NAME)` whose NAME holds a built-in s-op there, (NAME, that built-in)
    (rasp.lint_scope: `t = tokens;` makes `t` one, `tokens = tokens == "a";` makes `tokens` none)."""
    operand = node.operand
    if node.op is ast.UnaryOp.INDICATOR and reads is not None:
        name, built_in = reads
        kind, compared, value = TRUTH[built_in]
        kept = f"indicator({name} {compared})"
        held = name if name == built_in else f"{name}, which is {built_in},"
        yield Diagnostic(
            f"indicator({name}) is {value}: indicator is 1 where its argument is "
            f"true, and {held} holds {kind}, not bools",
            node.span,
            'compare first, as in indicator(tokens == "a"); '
            f"{kept} keeps this meaning without the warning",
            severity="warning",
        )
    if (
        node.op is ast.UnaryOp.ROUND
        and isinstance(operand, ast.Binary)
        and not isinstance(operand.left, ast.Literal)  # (`round(5 / 2)` shows its value)
        and _halves(operand)
        and not _bracketed(node.span, operand)
    ):
        # the dividend as written, its parentheses included (`(indices + 1) / 4`)
        left = operand.span
        x = _text(Span(left.source, left.line, left.col, operand.op_span.line, operand.op_span.col))
        divisor = _text(operand.right.span)
        bare = isinstance(operand.left, ast.Name | ast.Literal) or x.startswith("(")
        whole = x if bare else f"({x})"
        yield Diagnostic(
            f"round rounds halves to the even neighbour, as the original's (Python's) round: "
            f"round(1 / 2) is 0, round(3 / 2) is 2 and round(5 / 2) is 2, so round({x} / "
            f"{divisor}) is not the floor of {x} / {divisor}, nor rounded half up",
            node.span,
            f"the floor is ({whole} - {whole} % {divisor}) / {divisor}; "
            f"round(({x} / {divisor})) keeps this meaning without the note",
            severity="note",
        )


def _halves(operand: ast.Binary) -> bool:
    """`x / c` for an even integer c: x / c meets halves where x is a whole number."""
    if operand.op is not ast.BinaryOp.DIV:
        return False
    right = operand.right
    return (
        isinstance(right, ast.Literal)
        and isinstance(right.value, int)
        and right.value != 0
        and right.value % 2 == 0
    )


def _bracketed(call: Span, operand: ast.Binary) -> bool:
    """`round((x / 2))`: the division in parentheses of its own."""
    before = Span(call.source, call.line, call.col, operand.span.line, operand.span.col).text()
    return _COMMENT.sub("", before).count("(") > 1


def bound_names(statements: Iterable[object]) -> frozenset[str]:
    """The names `statements` bind (assignments, loop variables, a def's parameters), bodies
    included."""
    names: set[str] = set()
    stack = list(statements)
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, ast.Assign | ast.For):
            names.update(stmt.targets)
        if isinstance(stmt, ast.FuncDef):
            names.update((stmt.name, *stmt.params))
        if isinstance(stmt, ast.FuncDef | ast.For):
            stack.extend(stmt.body)
    return frozenset(names)


def _text(span: Span) -> str:
    return " ".join(span.text().split())
