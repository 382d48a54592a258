"""The forms (numpy scalar or Python value) tracr gives a value on one input, for the lowered graph's
evaluation (`rasp run`, `rasp verify`'s interpreter).

The lowered graph holds Python values (`rasp.tracr.numpy_values`). While the compiler calls a
program's functions on its value sets, a reader is given the numpy type the function gave for a
value (`NumpyTypes.given`), and a value given in two forms is refused. An evaluation of one input
must not depend on what was evaluated before, so there each function notes what it gave in the
evaluation's own notes (`rasp.sops.current_evaluation`): its output at each position, as given.
A reader at position i is given the output that reached it, found through the aggregates between
(`_form_at`: a default as written, a copied key's output, tracr's mean of the selected outputs),
as tracr computes it. Where that is not found (a rewritten graph that calls one function from two
nodes), the forms the function gave the value on this input are tried (`forms`): equal results are
the value, different ones an error.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rasp import sops
from rasp.errors import RaspRuntimeError
from rasp.seqvalues import sum_in_order
from rasp.tracr.boxes import plain
from rasp.tracr.numpy_values import NumpyTypes, Source, form_key

# (a bool, an int, a float: the Python numbers tracr's mean takes, numpy's np.float64 among them)
_MEAN_TYPES = (int, bool, float)


@dataclass
class _Seen:
    """The forms one function gave on one input: the types by the Python value (`plain`)."""

    kinds: dict[tuple[type, Any], set[type]]
    float64: bool = False  # it gave an np.float64 (a mean of its values may be one)
    numpy: bool = False  # it gave a numpy scalar (else every form is the graph's Python value)
    python_numbers: bool = False  # it gave a Python number (a mean of them may be Python's)


# a form not found at a position
_UNKNOWN = object()


def note_output(owner: object, out: Any) -> None:
    """In an evaluation, note `out` as the next position's output of the function `owner`
    (an evaluation calls a node's function once per position, in order)."""
    notes = sops.evaluation_notes()
    if notes is not None:
        notes.setdefault(("out", id(owner)), []).append(out)


def compile_facts() -> bool:
    """Whether a lowered function notes what it sees for the compiler (its numpy types, a value
    no model holds, an ambiguous read): outside an evaluation or in the compiler's own, not in one
    of an input (`rasp run`, a test), whose values need not be the compile's vocabulary's."""
    current = sops.current_evaluation()
    return current is None or current.compiling


def numpy_here(sources: Sequence[Source | None]) -> bool:
    """Whether a reader of `sources` may be given a numpy form: outside an evaluation, or where a
    source's function gave a numpy scalar on this input (else each value is its own form: the
    functions ran before the reader, so this holds for every call of one node)."""
    notes = sops.evaluation_notes()
    if notes is None:
        return True
    for source in sources:
        seen = None if source is None else notes.get(id(source.numpy))
        if seen is not None and seen.numpy:
            return True
        if source is not None and any(isinstance(d, np.generic) for d in source.defaults):
            return True  # (an aggregate default written as numpy's)
    return False


def next_call(owner: object) -> int | None:
    """In an evaluation, how many times the reader `owner` was called before on this input."""
    notes = sops.evaluation_notes()
    if notes is None:
        return None
    key = ("calls", id(owner))
    count = notes.get(key, 0)
    notes[key] = count + 1
    return int(count)


def note_form(numpy: NumpyTypes, out: Any) -> None:
    """In an evaluation, note the form of `out`, which a function with `numpy`'s types gave."""
    notes = sops.evaluation_notes()
    key = None if notes is None else form_key(out)
    if key is None:
        return
    seen = notes.get(id(numpy))
    if seen is None:
        seen = notes[id(numpy)] = _Seen({})
    seen.kinds.setdefault(key, set()).add(type(out))
    seen.numpy = seen.numpy or isinstance(out, np.generic)
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
    # an aggregate's default, as written (numpy's or Python's)
    found.extend(d for d in source.defaults if type(plain(d)) is type(value) and plain(d) == value)
    if source.averages and type(value) is float and seen is not None:
        # a mean: np.float64 where a selected value is one, Python's where all are Python's
        if seen.float64 or any(isinstance(d, np.float64) for d in source.defaults):
            found.append(np.float64(value))  # (a nested mean may average a default)
        if seen.python_numbers:
            found.append(value)
    unique: dict[tuple[type, Any], Any] = {}
    for form in found or [value]:
        unique.setdefault((type(form), form), form)
    return list(unique.values())


def _form_at(node: sops.Node, position: int, evaluation: sops.Evaluator) -> Any:
    """The value tracr has at `position` of `node`, the reader's input, in its form: through the
    value-passing checks and the aggregates to the function that gave it (its noted output).
    `_UNKNOWN` where that is not known."""
    while True:
        if isinstance(node, sops.MapSOp) and getattr(node.fn, "passes_value", False):
            node = node.inputs[0]
            continue
        if isinstance(node, sops.AggregateSOp):
            picked = [int(k) for k in np.flatnonzero(evaluation.matrix(node.selector)[position])]
            if not picked:
                return node.default if node.numpy_default is None else node.numpy_default
            if len(picked) == 1:
                node, position = node.sop, picked[0]
                continue
            found = [_form_at(node.sop, k, evaluation) for k in picked]
            if any(f is _UNKNOWN or not isinstance(f, _MEAN_TYPES) for f in found):
                return _UNKNOWN  # (tracr raises on numpy's ints: `MeanCheck`)
            return sum_in_order(found) / len(found)
        break
    outputs = evaluation.notes.get(("out", id(getattr(node, "fn", None))))
    if outputs is None or len(outputs) != evaluation.n:
        return _UNKNOWN
    return outputs[position]


def _exact(
    sources: Sequence[Source | None], values: Sequence[Any], positions: Sequence[int] | None
) -> list[Any] | None:
    """Each value as tracr has it at its position (`_form_at`), or None where one is not known
    (or is not the graph's value: then the positions are not what they seem)."""
    evaluation = sops.current_evaluation()
    if evaluation is None or positions is None:
        return None
    found = []
    for value, source, position in zip(values, sources, positions):
        if source is None or source.node is None:
            found.append(value)
            continue
        if not 0 <= position < evaluation.n:
            return None
        form = _form_at(source.node, position, evaluation)
        if form is _UNKNOWN or type(plain(form)) is not type(value) or plain(form) != value:
            return None
        found.append(form)
    return found


def call_given(
    call: Callable[..., Any],
    sources: Sequence[Source | None],
    values: Sequence[Any],
    text: str,
    positions: Sequence[int] | None = None,
) -> Any:
    """`call(*values)` with each value in the form tracr gives it: the one that reached its
    position (`positions`, per value), or where that is not known, each form the function gave it
    on this input; where those give different results, an error."""
    if not sources:
        return call(*values)
    exact = _exact(sources, values, positions)
    if exact is not None:
        return call(*exact)
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

    def __call__(self, row: Any, picked: Sequence[Any]) -> None:
        """`row`: the selector's row (a bool per key), `picked`: the values it selects."""
        if not numpy_here([self.source]):
            return  # (Python values only: tracr averages them)
        keys = [int(k) for k in np.flatnonzero(row)]
        shown = []
        for key, value in zip(keys, picked, strict=True):
            exact = _exact([self.source], [value], [key])
            options = forms(self.source, value) if exact is None else exact
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
                rest = [
                    (_exact([self.source], [v], [k]) or forms(self.source, v))[0]
                    for k, v in zip(keys[len(shown) :], picked[len(shown) :], strict=True)
                ]
                raise RaspRuntimeError(
                    "ValueError: Only types int, bool, and float are supported for aggregation. "
                    f"Received sequence: {[*shown, *rest]}"
                )
