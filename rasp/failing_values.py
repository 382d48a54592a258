"""A failing map's hint: where it failed and on which values, each input named as the program
wrote it (`it failed at position 2, where tokens = "a", n = 1`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rasp.nodes import (
    LABEL_MAX,
    IndicesSOp,
    LengthSOp,
    SOp,
    TokenKind,
    TokensSOp,
    cut_label,
)
from rasp.text_width import display_width
from rasp.wording import input_words, int_text


def failing_values(inputs: Sequence[SOp], position: int, values: Sequence[Any]) -> str:
    """`it failed at position 2, where tokens = "a", n = 1`: the inputs of a map where it failed."""
    names = [_sop_text(sop, k, len(inputs)) for k, sop in enumerate(inputs)]
    shown = ", ".join(
        f"{_told_apart(names, k, inputs)} = {_value_text(v)}"
        for k, (_, v) in enumerate(zip(inputs, values, strict=True))
    )
    return f"it failed at position {position}, where {shown}"


def _sop_text(sop: SOp, k: int, count: int) -> str:
    """Input k's name, else its source text (cut to LABEL_MAX characters, as an unnamed node's
    label is: `its input` told nothing of which of a long expression's parts failed), else
    `its input` / `its second input` (an unnamed input of a program built in Python, tracr's
    `rasp.tokens` too, has no text)."""
    if sop.name:
        return sop.name
    text = sop.span.shown_text() if sop.span is not None else ""
    if text:
        text = cut_label(text)
        return f"({text})" if " " in text else text  # `(tokens == "a") = False`
    match sop:
        case TokensSOp():
            return "tokens" if sop.kind is TokenKind.STR else f"tokens_{sop.kind.value}"
        case IndicesSOp() | LengthSOp():
            return "indices" if isinstance(sop, IndicesSOp) else "length"
    return input_words(k, count)


def _told_apart(names: Sequence[str], k: int, inputs: Sequence[SOp]) -> str:
    """Input k's name, and where it starts where another input's text was cut to the same
    (`a + b + c + ... / a + b + d + ...`)."""
    sop = inputs[k]
    span = sop.span
    if sop.name or span is None or display_width(span.shown_text()) <= LABEL_MAX:
        return names[k]  # not cut: it differs from every other input's text
    if not any(name == names[k] and inputs[j] is not sop for j, name in enumerate(names)):
        return names[k]
    return f"{names[k]} (line {span.line}, column {span.col})"


def _value_text(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}" (a string)'
    if isinstance(value, bool):
        return f"{value} (a boolean)"
    if isinstance(value, int):
        return int_text(value)
    return repr(value) if value is None else str(value)
