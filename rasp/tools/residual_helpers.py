"""Helper dimensions a sublayer writes: residual dims that hold no program variable.

A selector width's head writes `NAME.frac` = 1/(NAME + 1) (its attention to BOS), which the next
MLP turns into NAME (`compiler/widths.py`); sort's heads write `target_position.frac0`, `.frac1`.
`:residual` decodes program variables only, so such a head's checkpoint read "no decoded
variable is new or changed", as if it did nothing. `written_helpers` finds the dims a sublayer
changed that no decoded variable holds, with their values, and for `NAME.frac` of an s-op the
value the interpreter's NAME gives it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

HELPER_TOL = 1e-4  # a change smaller than this is float32 noise, not a write


@dataclass(frozen=True)
class HelperDim:
    """One helper dim at one checkpoint: what the model holds there at every real position."""

    label: str  # the residual label (`hist.frac`)
    values: tuple[float, ...]
    meaning: str | None = None  # what it holds in the program's terms (`1/(hist + 1)`)
    expected: tuple[float, ...] | None = None  # `meaning` on the interpreter's values

    @property
    def is_fraction(self) -> bool:
        """A width's frac (`n.frac`, sort's `target_position.frac0`): 1/k at every position."""
        return re.fullmatch(r".+\.frac\d*", self.label) is not None

    @property
    def wrong(self) -> tuple[int, ...]:
        """The positions where the model's value is not `expected`."""
        if self.expected is None:
            return ()
        return tuple(
            p
            for p, (got, want) in enumerate(zip(self.values, self.expected, strict=True))
            if not math.isclose(got, want, rel_tol=HELPER_TOL, abs_tol=HELPER_TOL)
        )


def written_helpers(
    before: np.ndarray,
    after: np.ndarray,
    labels: Sequence[str],
    skip: Collection[int],
    value_of: Callable[[str], Sequence[Any] | None],
) -> tuple[HelperDim, ...]:
    """The dims of `labels` not in `skip` (the special ones, the decoded variables') whose value
    at some real position differs between `before` and `after` [positions, d_model];
    `value_of(NAME)`: the interpreter's value of the s-op NAME, None where it has none."""
    found: list[HelperDim] = []
    for d, label in enumerate(map(str, labels)):
        if d in skip or ":" in label:
            continue  # (a one-hot column is a variable's, decoded or not)
        if np.all(np.abs(after[:, d] - before[:, d]) <= HELPER_TOL):
            continue
        values = tuple(float(v) for v in after[:, d])
        found.append(_with_meaning(label, values, value_of))
    return tuple(found)


def _with_meaning(
    label: str, values: tuple[float, ...], value_of: Callable[[str], Sequence[Any] | None]
) -> HelperDim:
    """`NAME.frac` holds 1/(NAME + 1) of a width NAME; other helpers are shown as they are."""
    name = label.removesuffix(".frac")
    if name == label:
        return HelperDim(label, values)
    widths = value_of(name)
    if widths is None or not all(_is_number(w) and w >= 0 for w in widths):
        return HelperDim(label, values, f"1/({name} + 1)")
    expected = tuple(1.0 / (float(w) + 1.0) for w in widths)
    return HelperDim(label, values, f"1/({name} + 1)", expected)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def fraction_text(value: float) -> str:
    """`1/3` for a value that is 1/k (as a width's frac is), else the number to 6 digits."""
    if value > 0 and math.isfinite(value):
        k = round(1.0 / value)
        if k >= 1 and math.isclose(value, 1.0 / k, rel_tol=HELPER_TOL, abs_tol=HELPER_TOL / 10):
            return "1" if k == 1 else f"1/{k}"
    return f"{value:.6g}"
