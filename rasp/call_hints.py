"""What the hint of a call with the wrong number of arguments says beyond the signature: where
the call reads as a habit from another language (`max(tokens_int)`, Python's maximum of a list),
what RASP writes for it."""

from __future__ import annotations

from collections.abc import Sequence

from rasp import ast

# The library's max and min take two s-ops (or atoms) and compare them at each position; a
# sequence's own maximum is the last of it sorted (the first: its minimum), at every position.
_EXTREMES = {"max": ("larger", "largest", "length - 1"), "min": ("smaller", "smallest", "0")}


def arity_hint(signature: str, name: str, args: Sequence[ast.Expr], library: bool) -> str:
    """`call it as max(a, b)`, and for the library's `max(x)` or `min(x)` that these work position
    by position, with what gives a sequence's largest (smallest) value. `library`: the function
    is the prelude's (its names are reserved: a program's own `max` is another function)."""
    hint = f"call it as {signature}"
    if not library or name not in _EXTREMES or len(args) != 1:
        return hint
    which, most, at = _EXTREMES[name]
    seq = " ".join(args[0].span.text().split())
    return (
        f"{hint}: {name} gives the {which} of two values at each position (it works position "
        f"by position, as every operation on s-ops does); the {most} value of the whole "
        f"sequence, at every position, is load_from_location(sort({seq}, {seq}), {at})"
    )
