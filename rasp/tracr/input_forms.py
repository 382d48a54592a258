"""The forms (numpy scalar or Python value) tracr gives a value on one input, for the lowered graph's
evaluation (`rasp run`, `rasp verify`'s interpreter).

The lowered graph holds Python values (`rasp.tracr.numpy_values`). While the compiler calls a
program's functions on its value sets, a reader is given the numpy type the function gave for a
value (`NumpyTypes.given`), and a value given in two forms is refused. An evaluation of one input
must not depend on what was evaluated before, so there each function notes the forms it gave in the
evaluation's own notes (`rasp.sops.evaluation_notes`), and a reader is given the forms noted on
this input: the one form where there is one, and where a value may stand for several (a function
gave `np.True_` at one position and `True` at another, an aggregate's default equals a numpy value
it copies, a mean is a Python float or an `np.float64`), the reader is called with each; equal
results are the value, different ones an error (no value holds which form it came in).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rasp import sops
from rasp.errors import RaspRuntimeError
from rasp.tracr.boxes import plain
from rasp.tracr.numpy_values import NumpyTypes, Source

# (a bool, an int, a float: the Python numbers tracr's mean takes, numpy's np.float64 among them)
_MEAN_TYPES = (int, bool, float)


@dataclass
class _Seen:
    """The forms one function gave on one input: the types by the Python value (`plain`)."""

    kinds: dict[tuple[type, Any], set[type]]
    float64: bool = False  # it gave an np.float64 (a mean of its values may be one)
    python_numbers: bool = False  # it gave a Python number (a mean of them may be Python's)


def note_form(numpy: NumpyTypes, out: Any) -> None:
    """In an evaluation, note the form of `out`, which a function with `numpy`'s types gave."""
    notes = sops.evaluation_notes()
    if notes is None or out is None or isinstance(out, (tuple, list)):
        return
    value = plain(out)
    try:
        key = (type(value), value)
        hash(key)
    except TypeError:
        return
    seen = notes.get(id(numpy))
    if seen is None:
        seen = notes[id(numpy)] = _Seen({})
    seen.kinds.setdefault(key, set()).add(type(out))
    if type(out) is np.float64:
        seen.float64 = True
    elif isinstance(out, _MEAN_TYPES) and not isinstance(out, np.generic):
        seen.python_numbers = True


def forms(source: Source | None, value: Any) -> list[Any]:
    """The forms tracr may give the graph's `value` from `source` on this input (one where the
    form is known), outside an evaluation the compiler's one (`NumpyTypes.given`)."""
    if source is None:
        return [value]
    notes = sops.evaluation_notes()
    if notes is None:
        return [source.given(value)]
    seen: _Seen | None = notes.get(id(source.numpy))
    found: list[Any] = []
    try:
        kinds = () if seen is None else seen.kinds.get((type(value), value), ())
    except TypeError:  # (an unhashable value: no number)
        return [value]
    found.extend(value if t is type(value) else t(value) for t in kinds)
    if any(type(d) is type(value) and d == value for d in source.defaults):
        found.append(value)  # an aggregate's default, as written
    if source.averages and type(value) is float and seen is not None:
        # a mean: np.float64 where a selected value is one, Python's where all are Python's
        if seen.float64:
            found.append(np.float64(value))
        if seen.python_numbers:
            found.append(value)
    unique: dict[tuple[type, Any], Any] = {}
    for form in found or [value]:
        unique.setdefault((type(form), form), form)
    return list(unique.values())


def call_given(
    call: Callable[..., Any], sources: Sequence[Source | None], values: Sequence[Any], text: str
) -> Any:
    """`call(*values)` with each value in the form tracr gives it; where a value may come in
    several forms on this input and `call`'s results for them differ, an error."""
    if not sources:
        return call(*values)
    options = [forms(s, v) for v, s in zip(values, sources)]
    if all(len(o) == 1 for o in options):
        return call(*(o[0] for o in options))
    results = [(args, call(*args)) for args in itertools.product(*options)]
    first_args, first = results[0]
    for args, result in results[1:]:
        if type(plain(result)) is not type(plain(first)) or plain(result) != plain(first):
            raise RaspRuntimeError(
                f"'{text}' gives {plain(first)!r} for {_shown(first_args)} and {plain(result)!r} "
                f"for {_shown(args)}: tracr gives this input's value in one of those forms "
                "(numpy's or Python's), which the lowered graph does not hold",
                hint="make the functions return Python values (bool(...), int(...), float(...))",
            )
    return first


def _shown(args: Sequence[Any]) -> str:
    return repr(args[0]) if len(args) == 1 else repr(tuple(args))


@dataclass(frozen=True)
class MeanCheck:
    """An aggregate's check of the values of each mean of several: tracr's mean takes Python's
    ints, bools and floats (np.float64 is one) and raises on numpy's other scalars (np.True_,
    np.int64, np.float32)."""

    source: Source

    def __call__(self, picked: Sequence[Any]) -> None:
        shown = []
        for value in picked:
            options = forms(self.source, value)
            taken = [isinstance(form, _MEAN_TYPES) for form in options]
            if not all(taken) and any(taken):
                raise RaspRuntimeError(
                    f"tracr averages {value!r} here as {options[taken.index(True)]!r} or refuses "
                    f"it as {options[taken.index(False)]!r} (numpy's), which the lowered graph "
                    "does not tell apart",
                    hint="make the function return Python values (bool(...), int(...))",
                )
            shown.append(options[0])
            if not any(taken):
                # tracr's own error, with the numpy scalars it received
                rest = [forms(self.source, v)[0] for v in picked[len(shown) :]]
                raise RaspRuntimeError(
                    "ValueError: Only types int, bool, and float are supported for aggregation. "
                    f"Received sequence: {[*shown, *rest]}"
                )
