"""Decoded residual values as the interpreter types them: int, float, bool, str or None.

`rasp.tools.residuals` decodes a one-hot group to its hot column's label text and a numerical
dim to a float; `decode_checkpoints` hands those on typed, so that a checkpoint compares with the
interpreter's values by `==`:

- a one-hot column: the value the file records for it (`residual_values`, docs/format.md: the
  text `1` is the int 1 or the str "1"); a file without them keeps the label text;
- a number: the value the file's reach lists for that dim within `RESIDUAL_TOL` (a reading of
  it alone, or the first dim of a vector one: `indices` beside `indices^2`), with the type its
  label gives (`2` an int, `2.0` a float, `True` a bool: `compiler.reach.atom_label`), else the
  float as decoded (a fault, or a dim no reading lists); a number listed both as an int and as a
  float, 0 and 0.0 (an aggregate's default beside its means, which the dim cannot tell apart),
  takes the interpreter's type at that position where the two are equal, else is the float;
- a width held as `NAME.frac` (a selector width or the length): an int where it is whole;
- a reading of a variable held in parts: the reach's label read back (`'a'` the str a), a
  sum of its parts typed as a number above.

A one-hot group with no column hot is `NO_VALUE` (shown `?`), never None, which is a value of
tracr's programs.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from rasp.tools.residual_parts import FracWidth, PartsReading, ReadingKind


class NoValue:
    """No column of a one-hot group is hot (or a vector reading's dims hold none of its values)."""

    _instance: NoValue | None = None

    def __new__(cls) -> NoValue:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NO_VALUE"

    def __str__(self) -> str:
        return "?"


NO_VALUE = NoValue()
_INT = re.compile(r"-?\d+")
_WORDS: dict[str, Any] = {"True": True, "False": False, "None": None}


def reach_value(label: str) -> Any:
    """The value a reach label writes (`atom_label`: a str as its repr, anything else as `str`);
    the label itself where it is neither (a tracr tuple's repr)."""
    if label in _WORDS:
        return _WORDS[label]
    if _INT.fullmatch(label):
        return int(label)
    if label[:1] in ("'", '"'):
        try:
            found = ast.literal_eval(label)
        except (ValueError, SyntaxError):
            return label
        return found if isinstance(found, str) else label
    try:
        return float(label)
    except ValueError:
        return label


def number_types(meta: Mapping[str, Any]) -> dict[int, list[tuple[float, Any]]]:
    """Per numerical dim that a reach reading reads alone, its (number, typed value) pairs."""
    reach = meta.get("reach")
    readings = reach.get("readings") if isinstance(reach, Mapping) else None
    found: dict[int, dict[str, tuple[float, Any]]] = {}
    for reading in readings if isinstance(readings, list) else ():
        try:
            if reading.get("categorical"):
                continue
            if reading.get("vector"):  # `indices` beside `indices^2`: its first dim holds it
                for term, label in zip(reading["terms"], reading["labels"], strict=True):
                    value = reach_value(str(label))
                    dim, number = int(term[0][0]), float(term[0][1])
                    if isinstance(value, int | float) and float(value) == number:
                        found.setdefault(dim, {})[str(label)] = (number, value)
                continue
            ((term,),) = reading["terms"]
            if float(term[1]) != 1.0:
                continue
            pairs = found.setdefault(int(term[0]), {})
            for number, label in zip(reading["numbers"], reading["labels"], strict=True):
                pairs[str(label)] = (float(number), reach_value(str(label)))
        except (TypeError, KeyError, ValueError, AttributeError, IndexError):
            continue  # informative metadata: a malformed reading is passed over
    return {dim: list(pairs.values()) for dim, pairs in found.items()}


def typed(
    var: Any,
    decoded: Sequence[Any],
    columns: Mapping[str, Any] | None,
    numbers: Mapping[int, list[tuple[float, Any]]],
    tol: float,
    want: Sequence[Any] | None = None,
) -> tuple[Any, ...]:
    """`var.decode`'s values typed; `columns`: a one-hot group's typed value per label text;
    `want`: the interpreter's values, whose type a whole number takes where the dim holds it as
    both an int and a float (it cannot tell them apart) and the two are equal."""
    if isinstance(var, FracWidth):
        return tuple(_whole(x, tol) for x in decoded)
    if isinstance(var, PartsReading):
        if var.kind is ReadingKind.NUMBER:  # a sum of parts: the values its labels list
            values = [reach_value(label) for label in var.labels]
            listed = [(float(v), v) for v in values if isinstance(v, int | float)]
            return tuple(_number(x, listed, tol) if x is not None else NO_VALUE for x in decoded)
        return tuple(NO_VALUE if x is None else reach_value(x) for x in decoded)
    if getattr(var, "values", None) is None:  # a numerical group
        listed = numbers.get(var.dims[0], [])
        wanted = list(want) if want is not None else []
        wanted += [None] * (len(decoded) - len(wanted))
        return tuple(_number(x, listed, tol, w) for x, w in zip(decoded, wanted, strict=False))
    return tuple(
        NO_VALUE if x is None else (columns[x] if columns and x in columns else x) for x in decoded
    )


def _number(x: float, listed: list[tuple[float, Any]], tol: float, want: Any = None) -> Any:
    close = [(abs(x - n), n) for n, _ in listed if math.isclose(x, n, rel_tol=tol, abs_tol=tol)]
    if not close:
        return x  # no value the program gives there: a fault, shown as decoded
    best = min(close)[1]
    near = {(type(v), v) for n, v in listed if n == best}
    if len(near) == 1:
        return next(iter(near))[1]
    # 1 and 1.0 both: the dim cannot tell, so the value is the interpreter's, where equal (as
    # the output's `whole_types` types it), else the float as decoded
    kinds = {kind for kind, _ in near}
    if type(want) in kinds and want == best:
        return want
    return x


def _whole(x: float | None, tol: float) -> Any:
    if x is None:
        return NO_VALUE
    whole = round(x)
    return whole if math.isclose(x, whole, rel_tol=tol, abs_tol=tol) else x
