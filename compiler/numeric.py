"""Float32 constants and error bounds that make compiled weights exact by construction.

Attention: a selected key scores `SCORE_UNIT` per satisfied atom; anything `SOFTMAX_GAP` or more
below the best score gets softmax weight exactly 0.0 in float32, because exp(-SOFTMAX_GAP) is below
half the smallest float32 subnormal (2**-150) and rounds to zero.

MLPs: a step pair `relu(D) - relu(D - 1)` is exactly 0 where D <= 0 and 1 (up to the two units'
rounding of D, which may differ: their dot products can be summed in different orders) where
D >= 1. Reachable inputs keep D far from the band (0, 1); `check_resolvable` refuses when the input
error and D's rounding could move it across. These are the builders' own estimates: the judge is
`compiler.certify`, which bounds every decision of the final weights.

See docs/compiler-weights.md for the proofs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rasp.errors import CompileError, Diagnostic

# Unit roundoff of float32 (half an ulp of 1.0).
F32_UNIT_ROUNDOFF = 2.0**-24
# Integers up to 2**24 add exactly in float32, in any order.
F32_EXACT_INTEGERS = 2.0**24

# exp(-x) rounds to 0.0 in float32 for x > 150*ln 2 ~ 103.97; 120 leaves room for score rounding.
SOFTMAX_GAP = 120.0
# One satisfied atom. BOS sits half a unit below the selected keys and half a unit above the best
# unselected key, so S/2 must exceed SOFTMAX_GAP; the extra 8 absorbs noise on one-hot readings.
# A power of two keeps q·k exact for 0/1 readings.
SCORE_UNIT = 256.0
# Score given to PAD keys relative to one unit (assembly: query `one` x key `pad`).
PAD_SCORE = -1e4 * SCORE_UNIT

# A step's slope is STEP_SHARPNESS / gap: the reachable values on either side of its threshold are
# STEP_SHARPNESS/2 - 1/2 pre-activation units away from the band (0, 1) where the step is not flat.
STEP_SHARPNESS = 4.0
# Extra factor between the worst-case input error and the tolerated one.
SAFETY_FACTOR = 2.0


def score_margin_ok(max_score_noise: float) -> bool:
    """Whether score noise of this size still leaves every unselected key SOFTMAX_GAP below."""
    return SCORE_UNIT / 2 - 2 * max_score_noise >= SOFTMAX_GAP


def rounding_error(max_abs: float, n_terms: int = 1) -> float:
    """Worst-case float32 error of a value of size <= max_abs computed by summing n_terms products."""
    n = max(n_terms, 1) + 1
    return n * F32_UNIT_ROUNDOFF / (1 - n * F32_UNIT_ROUNDOFF) * max_abs


def mean_error_bound(n_keys: int, max_abs_value: float) -> float:
    """Worst-case float32 error of a uniform attention mean over n_keys values of size <= max_abs.

    The weights are fl(1/n) (relative error u); the weighted sum of n terms adds at most
    gamma_{n} * sum |w v| <= gamma_{n} * max_abs (sequential summation, the worst order); the value
    and output projections add two more roundings.
    """
    n = max(n_keys, 1) + 3
    return n * F32_UNIT_ROUNDOFF / (1 - n * F32_UNIT_ROUNDOFF) * max_abs_value


@dataclass(frozen=True)
class ErrorBound:
    """|float32 x - exact x| <= absolute + relative * |exact x|, at every reachable x."""

    absolute: float
    relative: float = 0.0

    def at(self, xs: np.ndarray) -> np.ndarray:
        return self.absolute + self.relative * np.abs(xs)


def mean_error(n_keys: int, values: Sequence[float], default: float) -> ErrorBound:
    """The error of a uniform attention mean whose selected values are among `values`.

    The sum of n weighted terms errs by at most gamma_{n+3} * sum |w v| (mean_error_bound). When no
    value is negative, sum |w v| is the exact mean itself, so the bound is relative: a mean near 1/N
    is known to within about N * 2**-24 / N, not N * 2**-24 (the original's `length`, 1 / mean, stays
    exact at N = 256). With negative values it is the absolute bound of the largest value.
    """
    biggest = max((abs(v) for v in values), default=1.0)
    if all(v >= 0 for v in values):
        n = max(n_keys, 1) + 3
        return ErrorBound(0.0, n * F32_UNIT_ROUNDOFF / (1 - n * F32_UNIT_ROUNDOFF))
    return ErrorBound(mean_error_bound(n_keys, max(biggest, abs(default))))


def step_margin(slope: float, gap: float) -> float:
    """Distance, in pre-activation units, from a reachable value to the band (0, 1) of a step whose
    threshold is the midpoint of `gap`."""
    return slope * gap / 2 - 0.5


def preactivation_rounding(n_terms: int, magnitude: float) -> float:
    """Worst-case float32 error of a step's pre-activation D = sum of n_terms products whose
    absolute values add up to `magnitude`: storing the weights in float32 (relative u) and the dot
    product in any summation order (gamma_{n_terms + 1})."""
    n = n_terms + 2
    return n * F32_UNIT_ROUNDOFF / (1 - n * F32_UNIT_ROUNDOFF) * magnitude


def check_steps_resolvable(
    gap: float,
    x_error: ErrorBound,
    xs: np.ndarray,
    distance: np.ndarray,
    slope: float,
    slack: float,
    *,
    what: str,
    sizes: str = "",
) -> None:
    """check_resolvable at every reachable point: the input error there, times SAFETY_FACTOR and
    the step's slope, must stay within the point's `distance` from the step's band (0, 1) less
    `slack` (rounding and context noise), so that no reachable x can cross a threshold."""
    errors = x_error.at(xs)  # [P]
    room = (distance - slack) / slope  # [P]: the x tolerance at each point
    worst = int(np.argmax(SAFETY_FACTOR * errors - room))
    check_resolvable(gap, float(errors[worst]), float(room[worst]), what=what, sizes=sizes)


def check_resolvable(
    gap: float, input_error: float, tolerance: float, *, what: str, sizes: str = ""
) -> None:
    """Refuse (CompileError, no span) when a step cannot separate two reachable values `gap` apart:
    the input error, times SAFETY_FACTOR, must stay within the step's tolerance."""
    if gap <= 0 or not math.isfinite(gap):
        raise CompileError(
            [Diagnostic(f"{what}: two reachable values are not distinct ({gap!r} apart)")]
        )
    if SAFETY_FACTOR * input_error > tolerance:
        # a negative tolerance: the step's own rounding is past its margin, whatever its input
        allowed = (
            f"tolerance {tolerance:.3g}"
            if tolerance > 0
            else "no tolerance left: the step's own float32 rounding exceeds its margin"
        )
        raise CompileError(
            [
                Diagnostic(
                    f"{what}: values {gap:.3g} apart cannot be told apart exactly in float32 "
                    f"(input error up to {input_error:.3g}, {allowed}"
                    f"{'; ' + sizes if sizes else ''})",
                    # the input error grows with the length (sums of more terms) and with the
                    # values' size (float32 keeps about 7 significant digits)
                    hint="use a smaller maximum length or numbers of smaller magnitude (float32 "
                    "keeps about 7 significant digits), or compute it from s-ops with fewer "
                    "values (e.g. compare counts instead of fractions; in a tracr program, "
                    "rasp.categorical ones)",
                )
            ]
        )
