"""How far apart two float64 twins lie, said truly in the refusals that name them.

`fits.float64_twins` joins numbers within FLOAT64_NOISE (10^-9 relative) of each other, and whole
numbers from 2^53 on (2^53 and 2^53 + 2 are two float64 numbers, and float32 reads them alike). A
refusal said of every such pair that they "differ only by float64 rounding", which was false of
those two, and of 2e-9 and 1.3e-9 (7e-10 apart: no rounding of numbers this size leaves that).
Only a gap of a few units in the last place is rounding's: the words depend on the gap.
"""

from __future__ import annotations

import enum
import math

# Two twins further apart than this (relative to the larger) are not one number float64 rounding
# told apart: a handful of operations leaves a few units in the last place (2.2e-16 each).
ROUNDING = 1e-12


class Gap(enum.Enum):
    ROUNDING = "rounding"  # a few units in the last place: may be one number computed twice
    WHOLES = "wholes"  # two different whole numbers (float64 holds both exactly)
    NEAR = "near"  # within the twins' noise, but further apart than rounding leaves


def gap(a: float, b: float) -> Gap:
    """What separates the different numbers `a` and `b` (ints compared exactly: 2^53 + 1 is no
    float64, and no rounding of 2^53)."""
    if a != b and _whole(a) and _whole(b):
        return Gap.WHOLES
    x, y = float(a), float(b)
    if abs(x - y) <= ROUNDING * max(abs(x), abs(y)):
        return Gap.ROUNDING
    return Gap.NEAR


def gap_words(a: float, b: float, noise: float) -> str:
    """`a` and `b`, twins within `noise` (`fits.FLOAT64_NOISE`, passed in: fits imports this
    module), as a refusal names them: "numbers that ..." (no leading comma)."""
    match gap(a, b):
        case Gap.ROUNDING:
            return "numbers that differ only by float64 rounding"
        case Gap.WHOLES:
            return (
                f"different whole numbers closer than {noise:g} (relative), which a "
                "compiled model reads as one number"
            )
    return (
        f"numbers closer than {noise:g} (relative; absolute below 1), which a "
        "compiled model reads as one number"
    )


def _whole(v: float) -> bool:
    return type(v) is int or (isinstance(v, float) and math.isfinite(v) and v.is_integer())
