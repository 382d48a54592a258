"""Program variables the residual stream holds only in parts, read back through the file's reach.

Some variables have no residual group of their own: sort's `target_position`, a selector_width
of a disjunction, is the sum of one decoded width per conjunction (`target_position.part0`,
`.part1`), and where a head matches it numerically, its whole number and square are written again
(`target_position.int`, `.sq`). The residual labels alone give no value for the variable. The
file's reach (`compiler/reach.py`, docs/format.md) does: it lists every *reading* the model's
blocks read, in residual indices, and two kinds of them read such a variable's own value:

- a reading named as the variable: numerical (one linear combination of dimensions equal to the
  value: `target_position` = part0 + part1) or categorical (per value, the dimensions that are 1
  for it);
- a vector reading `NAME.int` (`NAME.x2.int`, ...; `compiler/squares.py`): per value of the
  variable, the exact number each of its dimensions holds (the whole number and its square).

`parts_readings` finds them; each decodes the variable at every position, as the blocks after it
read it. A selector width or the length that one head writes as `NAME.frac` = 1/(NAME + 1)
(`compiler/widths.py`) and no block turns into a number of its own (`first_follow`'s count of
earlier matches, read by an MLP through its frac) is read back as 1/frac - 1 (`FracWidth`). What no such reading covers (a head's `1/(w+1)` in `NAME.frac0`, the input of the MLP
that decodes a part) holds no value the interpreter gives, and is not compared: a fault there shows
where the reading is wrong. A file without a reach (older compilers) gives no readings.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

import numpy as np

from rasp.seqvalues import value_repr

PART_TOL = 1e-4  # a decoded number or a vector's dimension (relative and absolute)

Terms = tuple[tuple[int, float], ...]  # (residual index, coefficient or exact number)


class ReadingKind(Enum):
    NUMBER = "number"  # one linear combination of dimensions equal to the value
    CATEGORICAL = "categorical"  # per value, the dimensions that are 1 for it
    VECTOR = "vector"  # per value, the exact number each dimension holds


@dataclass(frozen=True)
class PartsReading:
    """One reach reading of a variable held in parts."""

    name: str  # the reading's: the variable's own, or `NAME.int` (a vector reading)
    variable: str  # the program variable whose values it reads
    kind: ReadingKind
    terms: tuple[Terms, ...]  # number: one; categorical and vector: one per label
    labels: tuple[str, ...]  # the values, as the reach writes them ('a' for a string)

    @property
    def dims(self) -> tuple[int, ...]:
        return tuple(dict.fromkeys(d for terms in self.terms for d, _ in terms))

    def decode(self, resid: np.ndarray) -> list[Any]:
        """The value at every position of `resid` [pos, d_model]: a number, or a label (None
        where no value's dimensions hold)."""
        if self.kind is ReadingKind.NUMBER:
            ((terms),) = self.terms
            return [float(sum(c * row[d] for d, c in terms)) for row in resid]
        if self.kind is ReadingKind.CATEGORICAL:
            scores = np.array(
                [[sum(c * row[d] for d, c in t) for t in self.terms] for row in resid]
            )
            best = scores.argmax(axis=1)
            return [self.labels[k] if scores[p, k] >= 0.5 else None for p, k in enumerate(best)]
        return [self._vector_label(row) for row in resid]

    def _vector_label(self, row: np.ndarray) -> str | None:
        for label, terms in zip(self.labels, self.terms, strict=True):
            if all(_close(row[d], held) for d, held in terms):
                return label
        return None

    def agrees(self, got: Any, want: Any) -> bool:
        if self.kind is ReadingKind.NUMBER:
            if got is None or isinstance(want, (str, bool)) or not isinstance(want, (int, float)):
                return False
            return _close(got, float(want))
        if got is None:
            return False
        own = _label(want)
        # the value's own label, where the reading has one: `1` is not `1.0` beside it
        return got == own if own in self.labels else _is_label(got, want)


def _close(got: float, want: float) -> bool:
    return math.isclose(got, want, rel_tol=PART_TOL, abs_tol=PART_TOL)


def _label(value: Any) -> str:
    return value_repr(value) if isinstance(value, str) else str(value)


def _is_label(label: str, value: Any) -> bool:
    """Whether the reach's `label` is `value` (strings quoted: `compiler.reach.atom_label`)."""
    if label == _label(value):
        return True
    if isinstance(value, (bool, str)) or not isinstance(value, (int, float)):
        return False
    try:  # a number labelled canonically (1.0 as "1")
        return float(label) == float(value)
    except ValueError:
        return False


@dataclass(frozen=True)
class FracWidth:
    """A selector width (or the length) the residual holds only as `NAME.frac` = 1/(NAME + 1),
    one dimension a head writes (`compiler/widths.py`): decoded as 1/frac - 1, a whole number
    where it is one up to float32 rounding (None where the frac is not positive: nothing wrote
    it there). Read like a numerical `rasp.tools.residuals.ResidualVariable`."""

    name: str
    dims: tuple[int]  # the `NAME.frac` dimension
    values: None = None  # numerical: no one-hot labels
    quoted: bool = False

    def decode(self, resid: np.ndarray) -> list[float | None]:
        found: list[float | None] = []
        for frac in resid[:, self.dims[0]]:
            if not frac > 0:  # 0 (ablated), negative or NaN: no width gives it
                found.append(None)
                continue
            width = 1.0 / float(frac) - 1.0
            whole = float(round(width))
            found.append(whole if _close(width, whole) else width)
        return found

    def agrees(self, got: Any, want: Any) -> bool:
        if got is None or isinstance(want, (str, bool)) or not isinstance(want, (int, float)):
            return False
        return _close(got, float(want))


def frac_widths(labels: Sequence[str], names: Sequence[str]) -> dict[str, FracWidth]:
    """The variables among `names` (those the layer map lists) that the residual `labels` hold
    only as a numerical `NAME.frac` group, by name."""
    groups: dict[str, list[int]] = {}
    for d, label in enumerate(map(str, labels)):
        name, colon, _ = label.partition(":")
        groups.setdefault(name if not colon else f"{name}:", []).append(d)
    return {
        name: FracWidth(name, (groups[f"{name}.frac"][0],))
        for name in names
        if name not in groups
        and f"{name}:" not in groups
        and len(groups.get(f"{name}.frac", ())) == 1
    }


def parts_readings(
    meta: Mapping[str, Any], variables: Sequence[str]
) -> dict[str, tuple[PartsReading, ...]]:
    """Per variable of `variables` (held in parts), the reach readings of its own value."""
    wanted = set(variables)
    found: dict[str, dict[tuple[str, str, tuple[Terms, ...]], PartsReading]] = {}
    reach = meta.get("reach")
    readings = reach.get("readings", []) if isinstance(reach, Mapping) else []
    for entry in readings:
        if not isinstance(entry, Mapping):
            continue
        name = str(entry.get("name"))
        vector = bool(entry.get("vector"))
        base = name.partition(".")[0] if vector else name
        if base not in wanted or (vector and not _vector_of(name, base)):
            continue
        kind = (
            ReadingKind.VECTOR
            if vector
            else ReadingKind.CATEGORICAL
            if entry.get("categorical")
            else ReadingKind.NUMBER
        )
        try:
            terms = tuple(tuple((int(d), float(c)) for d, c in t) for t in entry["terms"])
            labels = tuple(str(label) for label in entry.get("labels", ()))
        except (KeyError, TypeError, ValueError):
            continue  # a malformed entry reads nothing (the certifier's re-check says why)
        number = kind is ReadingKind.NUMBER
        if number and len(terms) != 1 or not number and len(terms) != len(labels):
            continue
        reading = PartsReading(name, base, kind, terms, labels)
        found.setdefault(base, {})[(name, kind, terms)] = reading
    return {name: tuple(readings.values()) for name, readings in found.items()}


def _vector_of(name: str, base: str) -> bool:
    """`NAME.int` or `NAME.x<scale>.int`: the vector reading of NAME's values."""
    rest = name[len(base) :]
    return rest == ".int" or (rest.startswith(".x") and rest.endswith(".int"))
