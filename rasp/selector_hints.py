"""Hints for a selector written where RASP wants something else (rasp.operators' type errors):
a first program joins a selector with an s-op by `and`, takes `indicator(sel)`, or passes a
selector where an s-op goes (`select(sel, indices, ==)`)."""

from __future__ import annotations

from typing import Any

INDICATOR = 'indicator(x) turns an s-op of bools into 1 and 0 (indicator(tokens == "a"))'


def mixed_logic_hint(op_text: str) -> str:
    """`sel and tokens == "a"`: the condition is written as a selector of its own."""
    return (
        f"'{op_text}' joins a selector only with another selector: write the condition as one, "
        'select(tokens, "a", ==) keeps the keys whose token is "a" (select(keys, queries, OP))'
    )


def unary_on_selector_hint(indicator: bool) -> str:
    """A unary operator other than `not` applied to a selector (`indicator(sel)`, `-sel`)."""
    if indicator:
        return f"{INDICATOR}; the number of keys a selector selects is selector_width(sel)"
    return "selectors combine only with 'and', 'or' and 'not'"


def selector_as_value_hint(selector: Any) -> str:
    """A selector where an s-op goes: it has no value per position."""
    name = getattr(selector, "name", None) or "sel"
    return (
        "a selector is a table of which keys each query selects, not a value per position: "
        f"its count of keys is selector_width({name}), the values it selects "
        f"aggregate({name}, x)"
    )
