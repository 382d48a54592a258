"""A tracr program's output map, its floats given to 12 significant digits.

tracr computes the same number in different ways on different inputs (14.4 and
14.399999999999999), and a numerical output lists each value it can snap to, so such twins would
be one value listed twice: `compiler.resolve` wraps a tracr output map in `Rounded`. To 12 digits
the map is the same within float64 noise: an affine one stays affine (`compiler.known_affine`),
and `compiler.vector_maps` computes it as the map it wraps, then rounds each distinct result.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any


@dataclasses.dataclass(frozen=True)
class Rounded:
    """`fn`, its float results rounded to 12 significant digits."""

    fn: Any

    def __post_init__(self) -> None:
        # The function called, under functools' name: what it noted while the compiler called it
        # (`rasp.tracr.lower.value_problems`) is read from it. An instance attribute, not a
        # property: `inspect.signature(Rounded)` follows a class's `__wrapped__`, and on a property
        # raised, which Python 3.11.2's dataclass did at import, computing the class's docstring.
        object.__setattr__(self, "__wrapped__", self.fn)

    def __call__(self, *args: Any) -> Any:
        return round_float(self.fn(*args))


def round_float(out: Any) -> Any:
    """A finite float to 12 significant digits; anything else as it is."""
    if isinstance(out, float) and math.isfinite(out):
        return float(f"{out:.12g}")
    return out


def unrounded(fn: Any) -> Any:
    """The function a `Rounded` wraps, else `fn` itself."""
    return fn.fn if isinstance(fn, Rounded) else fn
