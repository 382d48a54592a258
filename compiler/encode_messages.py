"""The encoder's refusals in words: a mean of what cannot be averaged, bools beside numbers."""

from __future__ import annotations

from collections.abc import Sequence

from compiler.blocks import Atom, all_numbers, is_number
from compiler.graph import IRNode, Op
from compiler.mean_markers import maps_back
from rasp.errors import Diagnostic


def not_averaged(node: IRNode, averaged: Sequence[Atom]) -> Diagnostic:
    """Why a mean cannot be built: the averaged values are not numbers, or only its default is
    not (`aggregate(sel, indices, "none")`: a mean of several keys is never "none")."""
    numbers = all_numbers(averaged, bools=True)
    if node.op is Op.AGGREGATE and numbers:
        return Diagnostic(
            f"'{node.text}' averages numbers, but its default {shown(node.value)} is not a number",
            node.span,
            "give it a number default (e.g. -1), or select at most one key so that nothing is "
            "averaged",
        )
    return Diagnostic(
        f"'{node.text}' has non-numeric values and cannot be averaged",
        node.span,
        "aggregate numbers, or select at most one key",
    )


def shown(value: Atom) -> str:
    return f'"{value}"' if isinstance(value, str) else repr(value)


def mixed_types_fix(origin: IRNode, root: IRNode, tracr: bool) -> str:
    """How to keep bools and numbers apart where they first meet (`origin`), in tracr's API where
    the program is written in it."""
    if origin.op is Op.TOKENS:
        return (
            "the vocabulary has bools and numbers equal to them: compile with tokens of one type, "
            "or read them as strings with tokens"
        )
    # (a tracr mean is a map back from its stand-ins, its default's among them: compiler.resolve)
    if origin.op is Op.AGGREGATE or (origin.op is Op.MAP and maps_back(origin.fn)):
        return "make an aggregate's default the same type as its values"
    where = "it" if origin is root else f"'{as_written(origin)}'"
    as_number = "rasp.Map(lambda x: 1 if x else 0, ...)" if tracr else "indicator(...)"
    return f"make {where} give values of one type (a bool as a number: {as_number})"


def as_written(node: IRNode) -> str:
    """A node as the program wrote it: its name, or its source text where a rewrite made its
    label (`map(_aggregate_1)` for tracr's `rasp.Aggregate(q3, s0, default=True)`)."""
    return node.span.shown_text() if node.span is not None and not node.named else node.text


def bools_collide(vals: Sequence[Atom]) -> bool:
    """Whether a bool and a number equal to it (False and 0, True and 1) are both among `vals`."""
    bools = {v for v in vals if isinstance(v, bool)}
    return any(is_number(v) and v in (0.0, 1.0) and bool(v) in bools for v in vals)
