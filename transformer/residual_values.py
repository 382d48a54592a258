"""The typed value of each one-hot residual column: the file's `residual_values` (docs/format.md).

A label's text cannot give a value back: `tokens:1` is the int 1 in a model of [1, 2] and the str
"1" in one of ["1", "2"] (labels quote strings only where two texts would clash), and `x:True` is
the bool or the str. The compiler therefore records, beside `residual`, `[value]` per one-hot
column (the value as a JSON atom, so 1, 1.0, true and "1" stay apart) and null for every other
dim. Files compiled before 2026-12-06 have no such field: their columns are known by text only.

`match` finds the column of a value as RASP compares values: Python's `==`, under which 1, 1.0
and True are equal but the str "1" is none of them; a column of the value's own type comes first
(1 beside True: the int's), and equal values of other types alone are ambiguous.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from math import isfinite
from typing import Any

from transformer.metadata_checks import Checker, json_text

KEY = "residual_values"


def parse(check: Checker, raw: dict[str, Any], labels: Sequence[str]) -> tuple[Any, ...] | None:
    """Per dim `(value,)` or None; None for a file without the field. Refuses a field of the wrong
    shape, or a value whose label text it is not (an edited file would patch the wrong column)."""
    entries = raw.get(KEY)
    if entries is None:
        return None
    if not isinstance(entries, list) or len(entries) != len(labels):
        raise check.fail(
            f"metadata field '{KEY}' must be a list of {len(labels)} entries, one per residual "
            f"dim, got {json_text(entries)}"
        )
    found: list[tuple[Any] | None] = []
    for dim, (entry, label) in enumerate(zip(entries, labels, strict=True)):
        if entry is None:
            found.append(None)
            continue
        name, colon, text = label.partition(":")
        ok = (
            isinstance(entry, list)
            and len(entry) == 1
            and _atom(entry[0])
            and colon
            and text in _texts(entry[0])
        )
        if not ok:
            raise check.fail(
                f"metadata field '{KEY}' holds {json_text(entry)} for residual dim {dim} "
                f"({json_text(label)}); each entry is null or [the column's value], whose label "
                "text it is"
            )
        found.append((entry[0],))
    return tuple(found)


def match(values: Sequence[Any], value: Any) -> list[int]:
    """The indices of `values` that `value` names: the equal ones (RASP's `==`) of its own type
    where there is one, else all equal ones (one: a match; several: ambiguous)."""
    equal = [i for i, v in enumerate(values) if _equal(v, value)]
    own = [i for i in equal if type(values[i]) is _kind(value)]
    return own or equal


def listed(values: Sequence[Any], limit: int = 20) -> str:
    """Values for a message, as Python writes them (`1, '1', True`: the types show)."""
    shown = ", ".join(repr(v) for v in values[:limit])
    return shown + (f", ... ({len(values)} values)" if len(values) > limit else "")


def _equal(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # a value whose `==` fails is equal to nothing here
        return False


def _kind(value: Any) -> type:
    """A numpy scalar counts as its Python kind (`np.int64(1)` is the int 1)."""
    item = getattr(value, "item", None)
    if item is not None and type(value).__module__ == "numpy":
        try:
            return type(item())
        except (TypeError, ValueError):
            return type(value)
    return type(value)


def _atom(value: Any) -> bool:
    if isinstance(value, float):
        return isfinite(value)
    return value is None or isinstance(value, str | int | bool)


def _texts(value: Any) -> tuple[str, ...]:
    """The label texts the compiler may write for `value` (`rasp.residual_labels`)."""
    if isinstance(value, str):
        return (value, json.dumps(value, ensure_ascii=False))
    return (str(value),)
