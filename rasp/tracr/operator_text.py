"""The text of a map a Python operator built inside a library call (`balance < 0` in
`lib.make_shuffle_dyck`): every s-op such a call builds has the call's span, whose text names
none of them, and tracr's operators build maps of lambdas, which have no text of their own. The
operator (`rasp.tracr.sop_nodes._written`) recorded what it computes; the lowered map carries
that as its note, `balance_() < 0`, which messages and `rasp show` read where the span is
shared (rasp.written_text, compiler.graph)."""

from __future__ import annotations

from collections.abc import Sequence

from rasp import sops
from rasp.tracr.expr import RASPExpr
from rasp.wording import atom_text
from rasp.written_text import label

_WIDTH = 60  # a longer text is left out: the map is then written from its inputs


def made_with_inputs(expr: RASPExpr, inputs: Sequence[sops.Node]) -> bool:
    """Whether `expr`'s span is one of its inputs' (one call made both), so names neither."""
    span = getattr(expr, "span", None)
    return span is not None and any(
        i.span is not None and i.span.source is span.source and i.span == span for i in inputs
    )


def operator_note(expr: RASPExpr, inputs: Sequence[sops.Node]) -> str | None:
    """`expr`'s operator text, its s-op operands written as program text, where its span is one
    of its inputs' (a call made both); None elsewhere (its own source text says it)."""
    form = getattr(expr, "operator_form", None)
    if form is None or not made_with_inputs(expr, inputs):
        return None
    template, operands = form
    children = list(expr.children)
    shown = []
    for operand in operands:
        at = next((k for k, c in enumerate(children) if c is operand), None)
        if at is None:
            shown.append(atom_text(operand))
            continue
        shown.append(label(inputs[at], _WIDTH))
    note = template.format(*shown)
    return note if len(note) <= _WIDTH else None
