"""A two-valued map of two numbers that is a threshold of x - m·y: the slope m, from its rows.

`indices > 0.75 * length` (or `indices / length > 0.75`) is True exactly where indices - 0.75·length
is above 0, but no fixed coefficient pair (`linear_steps.COEFFICIENTS`: x - y, x + y) finds it, and
stepped over the index with the length as context it costs N² parameters (384,804 at N = 256). Its
rows give the slope: grouped by y, each group's x values of one output lie below its x values of the
other, in the interval (lo(y), hi(y)); a line x = m·y + c through every interval exists where, for
every two groups y_i < y_j, lo_j - hi_i < m·(y_j - y_i) < hi_j - lo_i. The simplest fraction in the
feasible range of m is taken (3/4 here, exact in float32). Whether the map is then a function of
x - m·y is checked at every row by the caller, as for the fixed pairs, and the certifier proves the
step MLP built over it.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

# Groups (distinct values of the grouping column) above this are not searched: the pairs are
# groups² (a mean's values at N = 256 would be millions of pairs).
MAX_GROUPS = 1024
# The slope is the simplest fraction in its range with a denominator up to this, else the range's
# middle.
MAX_DENOMINATOR = 64


def separating_coefficients(
    x: np.ndarray, y: np.ndarray, out_ids: np.ndarray
) -> list[tuple[float, float]]:
    """Coefficient pairs (a, b) such that a line a·x + b·y = c separates the rows' two outputs
    (`out_ids` 0 and 1, [rows] each): grouped by y with the threshold on x, then grouped by x.
    Empty where the map has another number of outputs or no line separates them."""
    if set(np.unique(out_ids).tolist()) != {0.0, 1.0}:
        return []
    found: list[tuple[float, float]] = []
    for along, across, flip in ((x, y, False), (y, x, True)):
        slope = _slope(along, across, out_ids)
        if slope is not None:
            coef = (-slope, 1.0) if flip else (1.0, -slope)
            if coef not in found:
                found.append(coef)
    return found


def _slope(x: np.ndarray, y: np.ndarray, out_ids: np.ndarray) -> float | None:
    """m where x - m·y separates the outputs (either above the other), else None."""
    groups, at = np.unique(y, return_inverse=True)
    if len(groups) < 2 or len(groups) > MAX_GROUPS:
        return None
    for upper in (1, 0):  # which output lies above the line
        lo = np.full(len(groups), -np.inf)  # per group: the largest x of the lower output
        hi = np.full(len(groups), np.inf)  # the smallest x of the upper output
        np.maximum.at(lo, at[out_ids != upper], x[out_ids != upper])
        np.minimum.at(hi, at[out_ids == upper], x[out_ids == upper])
        if np.any(lo >= hi):
            continue
        span = _feasible(groups, lo, hi)
        if span is not None:
            return _simplest(*span)
    return None


def _feasible(groups: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[float, float] | None:
    """The open range of slopes m with some c such that lo(y) < m·y + c < hi(y) at every group."""
    dy = groups[None, :] - groups[:, None]  # [i, j]: y_j - y_i
    later = dy > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        low = (lo[None, :] - hi[:, None]) / dy  # lo_j - hi_i < m·dy
        high = (hi[None, :] - lo[:, None]) / dy  # m·dy < hi_j - lo_i
    low = low[later & np.isfinite(low)]
    high = high[later & np.isfinite(high)]
    m_low = float(low.max(initial=-np.inf))
    m_high = float(high.min(initial=np.inf))
    if not m_low < m_high:
        return None
    return m_low, m_high


def _simplest(low: float, high: float) -> float:
    """The fraction of smallest denominator (up to MAX_DENOMINATOR) strictly inside (low, high),
    else its middle (0 where it is unbounded on both sides)."""
    if math.isinf(low) and math.isinf(high):
        return 0.0
    if math.isinf(low) or math.isinf(high):
        edge = high if math.isinf(low) else low
        return float(math.floor(edge) - 1 if math.isinf(low) else math.floor(edge) + 1)
    exact_low, exact_high = Fraction(low), Fraction(high)
    for q in range(1, MAX_DENOMINATOR + 1):
        p = math.floor(exact_low * q) + 1  # the smallest p with p/q > low
        if Fraction(p, q) < exact_high:
            return p / q
    return (low + high) / 2
