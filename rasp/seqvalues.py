"""Evaluated s-ops: `SeqValue` (plain Python values and one type label) and the original's typing rule.

`rasp.sops` re-exports everything here; the evaluator there builds every sequence with `make_seq`.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

import numpy as np

from rasp.errors import RaspRuntimeError, Span
from rasp.nodes import Node, Selector, SOp

# tracr's n-ary maps pack arguments into tuples; a tuple or list value travels through the graph
# and a model's file as this mark followed by its repr (rasp.tracr.boxes boxes and unboxes them).
BOX_MARK = "\x00"


def sum_in_order(values: Iterable[Any]) -> Any:
    """`sum(values)` as Python computed it before 3.12: one add at a time, left to right, from 0.
    Python 3.12's `sum` compensates float rounding (Neumaier), which moves a mean's last bit
    (`[0.1] * 10` sums to 1.0 there, 0.9999999999999999 here); a program's value, and so a model
    compiled from it, must not depend on the Python it runs on."""
    return functools.reduce(operator.add, values, 0)


def value_repr(value: Any) -> str:
    """`repr(value)` for a message, a boxed tuple or list as its own repr (`('a', 1)`)."""
    if isinstance(value, str) and value.startswith(BOX_MARK):
        return value[len(BOX_MARK) :]
    return repr(value)


class SeqType(Enum):
    """The type label of an evaluated sequence, as the original prints it."""

    INTS = "ints"
    FLOATS = "floats"
    STRINGS = "strings"
    BOOLS = "bools"
    NONE = "none"  # every value is None (only programs lowered from tracr have None)


@dataclass(frozen=True)
class SeqValue:
    """An evaluated s-op: plain Python values (an int stays an int) and their type label."""

    values: tuple[Any, ...]
    type: SeqType

    def __len__(self) -> int:
        return len(self.values)

    def array(self) -> np.ndarray:
        """The values as a typed numpy array (for vectorised select and aggregate); an object array
        when they hold None or several types (tracr programs), so Python compares them."""
        if not all(isinstance(v, _ARRAY_KINDS[self.type]) for v in self.values) or (
            # numpy's strs drop trailing NULs: "a\x00" would compare equal to "a"
            self.type is SeqType.STRINGS and any(v.endswith("\x00") for v in self.values)
        ):
            out = np.empty(len(self.values), dtype=object)
            out[:] = self.values
            return out
        if self.type is SeqType.STRINGS:
            return np.array(self.values, dtype=str)
        if self.type is SeqType.BOOLS:
            return np.array(self.values, dtype=bool)
        if self.type is SeqType.INTS:
            try:
                return np.array(self.values, dtype=np.int64)
            except OverflowError:
                return np.array(self.values, dtype=object)
        try:
            return np.array(self.values, dtype=np.float64)
        except OverflowError:  # a whole number past float's range among floats: Python adds them
            return np.array(self.values, dtype=object)


# The Python types a typed numpy array of each label holds (bools mix with numbers, as in RASP).
_ARRAY_KINDS: dict[SeqType, type | tuple[type, ...]] = {
    SeqType.STRINGS: str,
    SeqType.BOOLS: bool,
    SeqType.INTS: int,
    SeqType.FLOATS: (int, float),
    SeqType.NONE: (),
}


def type_of_value(value: Any) -> SeqType | None:
    if value is None:
        return SeqType.NONE
    if isinstance(value, bool):
        return SeqType.BOOLS
    if isinstance(value, int):
        return SeqType.INTS
    if isinstance(value, float):
        return SeqType.FLOATS
    if isinstance(value, str):
        return SeqType.STRINGS
    return None


def _kind(value: Any) -> str:
    """A value that no s-op may hold, named for an error (not by our classes' or numpy's repr)."""
    if isinstance(value, SeqValue):
        return "an evaluated s-op (an s-op applied to an input)"
    if isinstance(value, np.ndarray):
        return "an evaluated selector (a selector applied to an input)"
    if callable(getattr(value, "signature", None)):  # a function (rasp.values, above this)
        return f"function {value.signature()}"
    kind = "s-op" if isinstance(value, SOp) else "selector" if isinstance(value, Selector) else ""
    return f"{kind or type(value).__name__}: {_text(value)}"


def _text(value: Any) -> str:
    """Python's repr, except that an s-op, selector or function inside a list or dict is named
    (its repr is our class's, `IndicesSOp(name='indices')`, or a function's with its syntax tree)."""
    if isinstance(value, Node):
        return value.label
    if callable(getattr(value, "signature", None)):
        return f"function {value.signature()}"
    if isinstance(value, list):
        return "[" + ", ".join(_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_text(k)}: {_text(v)}" for k, v in value.items()) + "}"
    return repr(value)


def make_seq(
    values: Sequence[Any],
    span: Span | None = None,
    *,
    loose: bool = False,
    mixed_hint: str | None = None,
) -> SeqValue:
    """A `SeqValue`, checking the original's rule: one type, except that numbers mix
    (`mixed_hint`: what to do where types mix, said by the operation that made the values).

    Bools count as ints (as Python's isinstance has it); ints or bools with floats are floats.
    None (from tracr programs) has no type of its own: it mixes with any. `loose` (tracr's rule)
    accepts any mixture, labelled `strings`.
    """
    types = {type_of_value(v) for v in values}
    if None in types:
        at, bad = next((i, v) for i, v in enumerate(values) if type_of_value(v) is None)
        allowed = (
            "ints, floats, strings, bools or None" if loose else "ints, floats, strings or bools"
        )
        raise RaspRuntimeError(
            f"s-op values must be {allowed}, got {_kind(bad)} at position {at}", span
        )
    types.discard(SeqType.NONE)
    if not types:
        return SeqValue(tuple(values), SeqType.NONE)
    if len(types) > 1 and types <= {SeqType.BOOLS, SeqType.INTS, SeqType.FLOATS}:
        # The original checks isinstance(v, int), which bools pass: a default 0 among bools
        # (`aggregate(sel, tokens == "a")`) makes ints, and any mix with floats makes floats.
        # The values themselves are kept as they are (True stays True).
        mixed = SeqType.FLOATS if SeqType.FLOATS in types else SeqType.INTS
        return SeqValue(tuple(values), mixed)
    if len(types) > 1 and loose:
        return SeqValue(tuple(values), SeqType.STRINGS)
    if len(types) > 1:
        kinds = ", ".join(sorted(t.value for t in types if t is not None))
        raise RaspRuntimeError(
            f"attempted to create sequence with vals of different types ({kinds})",
            span,
            hint=mixed_hint,
        )
    (only,) = types
    assert only is not None
    return SeqValue(tuple(values), only)
