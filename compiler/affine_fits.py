"""Exact affine fits over a map's reachable points: `affine_fit` and `affine_points` recognise maps
that are exactly affine, which become free numerical views instead of MLPs, with a bound on how far
a value lies from its fit (`row_misfit`, `sum_misfit`) that the certifier carries.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from compiler.blocks import Atom, is_number
from compiler.grids import dyadic_exponent

# What an affine fit lets a row's value miss the line by, relative to max(1, |value|): a tracr
# output's rounding to 12 significant digits (compiler.rounded), far below the gap between two
# values a model tells apart (compiler.fits.FLOAT64_NOISE), which no error bound could then
# carry it across
FIT_NOISE = 1e-11


def exact_affine_fit(
    xs: list[list[float]] | np.ndarray, ys: list[float] | np.ndarray
) -> list[float] | None:
    """The coefficients of `affine_fit` (its misfit dropped), else None."""
    found = affine_fit(xs, ys)
    return None if found is None else found[0]


def affine_fit(
    xs: list[list[float]] | np.ndarray, ys: list[float] | np.ndarray
) -> tuple[list[float], float] | None:
    """([a_1, ..., a_k, b], misfit) with ys == sum_j a_j xs[:, j] + b on every row up to float64
    noise, else None; `misfit` bounds |y - (sum_j a_j x_j + b)| in exact arithmetic on every row
    (`row_misfit`). Affine maps in programs have simple coefficients: rounded to 2**-20.

    The misfit allowed is each row's own (FIT_NOISE of max(1, |y|), and float64's rounding of
    the sum of its terms), never a share of the largest |y|: a misfit of 1e-9 of the largest
    value, 2.05e-6 beside 256 * w1 + 2^-10 at N = 9, moved the output at w1 = 0 from
    0.0009780625 to the listed 0.0009765625, certified (the snap's margin 7.5e-7, its float32
    bound 1.75e-10). FIT_NOISE, not FLOAT64_NOISE: two values FLOAT64_NOISE apart are two values
    to a step between them, whose threshold a misfit of that size crosses where the step is
    exact. What is allowed is still carried: a view is read as its fit, so the view's reading
    records the misfit (`Encoded.misfit`) and the certifier adds it to the error of every
    decision that reads the view (`bounds.Linear`)."""
    y = np.asarray(ys, dtype=np.float64)  # [rows]
    x = np.asarray(xs, dtype=np.float64).reshape(len(y), -1)  # [rows, k]
    a = np.concatenate([x, np.ones((len(y), 1))], axis=1)  # [rows, k + 1]
    coef, *_ = np.linalg.lstsq(a, y, rcond=None)
    coef = np.round(coef * 2**20) / 2**20
    terms = np.abs(a) @ np.abs(coef)  # [rows]: float64 rounds the sum (and y) relative to these
    noise = FIT_NOISE * np.maximum(1.0, np.abs(y)) + 16 * a.shape[1] * 2.0**-53 * terms
    if np.any(np.abs(a @ coef - y) > noise):
        return None
    return [float(c) for c in coef], row_misfit(a, coef, y)


def row_misfit(a: np.ndarray, coef: np.ndarray, y: np.ndarray) -> float:
    """A bound on max over rows |y - a @ coef| in exact arithmetic (`a` [rows, k + 1] with its
    ones column, `coef` [k + 1]): 0 where float64 computes every row's sum exactly (dyadic
    inputs on a grid within 2^53 steps, most fits: widths, indices, lengths) and it equals y;
    else float64's residual plus the rounding of the sum and of the difference."""
    if not len(y):
        return 0.0
    fitted = a @ coef  # [rows]
    residual = np.abs(fitted - y)
    terms = np.abs(a) @ np.abs(coef)  # [rows]
    finite = bool(np.isfinite(terms).all() and np.isfinite(y).all())
    if finite:
        grid = int(dyadic_exponent(a).max(initial=0)) + int(dyadic_exponent(coef).max(initial=0))
        size = float(np.maximum(terms, np.abs(y)).max(initial=0.0))
        if grid <= 60 and math.ldexp(size, grid) < 2.0**52:
            # every product and partial sum, and fitted - y, is a float64 number: exact
            return float(residual.max(initial=0.0))
    n = a.shape[1] + 1
    gamma64 = n * 2.0**-53 / (1 - n * 2.0**-53)
    bound = residual * (1 + 2.0**-52) + gamma64 * (terms + np.abs(y)) * 2
    return float(bound.max(initial=0.0))


def sum_misfit(
    coef: Sequence[float], inputs: Sequence[Sequence[float]], sums: Sequence[float]
) -> float:
    """A bound on |s - sum_j coef_j x_j| (exact arithmetic) for float64 sums `s` of inputs taking
    the values `inputs[j]`: 0 where float64 sums them exactly (one dyadic grid within 2^52
    steps), else its rounding of a sum of len(coef) terms."""
    c = np.asarray(coef, dtype=np.float64)
    top = [max((abs(float(x)) for x in xs), default=0.0) for xs in inputs]
    size = float(np.abs(c) @ np.array(top)) if len(top) else 0.0
    size = max(size, max((abs(float(v)) for v in sums), default=0.0))
    grid = int(dyadic_exponent(c).max(initial=0)) + max(
        (int(dyadic_exponent(np.asarray(xs, dtype=np.float64)).max(initial=0)) for xs in inputs),
        default=0,
    )
    if math.isfinite(size) and grid <= 60 and math.ldexp(size, grid) < 2.0**52:
        return 0.0
    n = len(c) + 1
    return n * 2.0**-53 / (1 - n * 2.0**-53) * size * 2


def affine_points(points: list[tuple[float, Atom]]) -> tuple[float, float] | None:
    """(a, b) of `affine_points_misfit`, else None."""
    found = affine_points_misfit(points)
    return None if found is None else found[0]


def affine_points_misfit(
    points: list[tuple[float, Atom]],
) -> tuple[tuple[float, float], float] | None:
    """((a, b), misfit) with out == a*x + b on every point (exactly, up to 1e-11: a tracr output
    map's floats are given to 12 significant digits, `compiler.rounded`), else None; `misfit`
    bounds |out - (a*x + b)| in exact arithmetic (`row_misfit`)."""
    if not all(is_number(v) or isinstance(v, bool) for _, v in points):
        return None
    table = {x: float(v) for x, v in points}
    if len(table) >= ARRAY_MIN_POINTS and all(type(x) is float and x == x for x in table):
        return _affine_arrays(table)
    pts = sorted(table.items())
    if len(pts) < 2:
        return ((0.0, pts[0][1]), 0.0) if pts else None
    (x0, y0), (x1, y1) = pts[0], pts[-1]
    a = (y1 - y0) / (x1 - x0)
    b = y0 - a * x0
    ok = all(abs(a * x + b - y) <= 1e-11 * max(1.0, abs(y)) for x, y in pts)
    if not ok:
        return None
    xs = np.array([[x, 1.0] for x, _ in pts])
    misfit = row_misfit(xs, np.array([a, b]), np.array([y for _, y in pts]))
    return (a, b), misfit


# From this many distinct points on, `affine_points_misfit` sorts and checks them as arrays (a
# map's fit per context value over a product of means: numeric seed 2070534 at N = 8 spent 140 s
# in the Python loops); below, the loops are faster than making the arrays.
ARRAY_MIN_POINTS = 64


def _affine_arrays(table: dict[float, float]) -> tuple[tuple[float, float], float] | None:
    """`affine_points_misfit` of its distinct points x -> y (floats, no NaN x: sorted by x they
    are in one order, as `sorted` puts them), the same float64 operations elementwise."""
    xs = np.fromiter(table.keys(), dtype=np.float64, count=len(table))
    ys = np.fromiter(table.values(), dtype=np.float64, count=len(table))
    order = np.argsort(xs, kind="stable")
    xs, ys = xs[order], ys[order]
    x0, x1, y0, y1 = float(xs[0]), float(xs[-1]), float(ys[0]), float(ys[-1])
    a = (y1 - y0) / (x1 - x0)
    b = y0 - a * x0
    with np.errstate(all="ignore"):  # (inf and NaN outputs compare as the loop's do: refused)
        ok = bool((np.abs(a * xs + b - ys) <= 1e-11 * np.maximum(1.0, np.abs(ys))).all())
    if not ok:
        return None
    misfit = row_misfit(np.column_stack((xs, np.ones_like(xs))), np.array([a, b]), ys)
    return (a, b), misfit
