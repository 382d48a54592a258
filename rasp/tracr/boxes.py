"""How tracr's tuples travel through a lowered graph: a tuple or list (tracr's n-ary maps pack
values into tuples) is an interned string token starting with `BOX` (`box`), unpacked before a
program's function sees it (`unbox`); `equality_token` gives it a token equal exactly where
Python's `==` finds the tuples equal. A string of the program's own with that mark (`marked`)
cannot be told from such a token, so the lowering refuses it.
"""

from __future__ import annotations

import ast
import math
import numbers
from collections.abc import Iterable
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np

from rasp import sops
from rasp.errors import Diagnostic, RaspRuntimeError


def plain(value: Any) -> Any:
    """A numpy scalar as the Python value it holds (tracr programs compute with numpy too)."""
    if isinstance(value, np.generic):
        return value.item()
    return value


# A tuple (tracr's n-ary maps pack arguments into tuples) or a list travels through the graph as an
# interned string token and is unpacked before a program's function sees it.
BOX = sops.BOX_MARK
_boxed: dict[str, Any] = {}


def box(value: Any) -> Any:
    """`value`, or the token that stands for it when it is a tuple or a list."""
    if isinstance(value, (tuple, list)):
        value = type(value)(plain(v) for v in value)
        token = BOX + repr(value)
        _boxed.setdefault(token, value)
        return token
    return value


def marked(value: Any) -> bool:
    """Whether `value` is a string of the program's own (not a `box` token) that starts with the
    mark of a boxed tuple: the graph would read it as the tuple its text spells, where tracr sees a
    string (the type name of "\\x00(1, 2)" would be "tuple"), so no model holds it."""
    return isinstance(value, str) and value.startswith(BOX)


def marked_problem(value: Any, what: str, span: Any, after: str = "") -> Diagnostic:
    """The refusal of a program's string `value` that starts with the tuple mark (`marked`)."""
    return Diagnostic(
        f"{what} {value!r}{after}: it starts with {BOX!r}, which marks a tuple in a compiled "
        "model, so the model would read it as the tuple its text spells",
        span,
        f"use strings that do not start with {BOX!r}",
    )


def unbox(value: Any) -> Any:
    """The tuple or list a token stands for; any other value unchanged. A token this process did
    not make (a compiled model's output, read from its file) is read back from its text."""
    if marked(value):
        found = _boxed.get(value)
        if found is None:
            found = _parse_box(value)
        return value if found is None else found
    return value


def model_values(values: Iterable[Any], tuples: bool) -> list[Any]:
    """A compiled model's decoded outputs as the program's values: its marked strings unboxed
    where its file says they are tracr's tuples (`output.tuples`), else unchanged (a RASP
    program's own token "\x00(1, 2)" is a string)."""
    return [unbox(v) for v in values] if tuples else list(values)


def _parse_box(token: str) -> tuple[Any, ...] | list[Any] | None:
    try:
        value = ast.literal_eval(token[len(BOX) :])
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, (tuple, list)) else None


def is_value(value: Any) -> bool:
    """Whether a compiled model can hold `value`: None, a bool, an int, a finite float, a string."""
    if value is None or isinstance(value, (bool, int, str)):
        return True
    return isinstance(value, float) and math.isfinite(value)


def equality_token(value: Any, role: str) -> str:
    """A boxed tuple's (or list's) token for `==`: equal to another's exactly where Python finds
    the two values equal (numbers by their exact value, 1 == 1.0 == True; tuples and lists apart)."""
    unboxed = unbox(value)

    def key(v: Any) -> Any:
        # a numpy scalar inside a nested tuple, a Fraction or a Decimal equals the Python number
        # it holds (np.int64(1) == 1 == Fraction(1)): one number key for all of them
        v = plain(v)
        if isinstance(v, complex) and v.imag == 0:
            v = v.real
        if isinstance(v, (numbers.Rational, float, Decimal)):
            if v != v:  # NaN equals nothing, not even itself
                raise RaspRuntimeError(
                    f"a compiled model cannot compare the {role} {unboxed!r}, which holds NaN"
                )
            try:
                return ("number", Fraction(v))
            except OverflowError:  # an infinity
                return ("number", float(v))
        if isinstance(v, (tuple, list)):
            return (type(v).__name__, tuple(key(x) for x in v))
        if isinstance(v, (set, frozenset)):  # {1} == frozenset({1.0}): by their elements' keys
            return ("set", tuple(sorted(repr(key(x)) for x in v)))
        if isinstance(v, dict):
            return ("dict", tuple(sorted(repr((key(k), key(x))) for k, x in v.items())))
        if v is None or isinstance(v, (str, bytes)):
            return (type(v).__name__, v)
        raise RaspRuntimeError(  # its repr need not tell equal values apart, nor its == be Python's
            f"a compiled model cannot compare the {role} {unboxed!r}, which holds "
            f"{type(v).__name__} {v!r}"
        )

    return BOX + "==" + repr(key(unboxed))
