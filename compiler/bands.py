"""Finding the bands of a map of two whole numbers (`compiler.piecewise` builds them): the fewest
bands of one integer direction s = a·x + b·y on each of which the map is exactly affine with dyadic
coefficients, or a sum of such components (`fit`): bands where the first few values of the
position or the length are left out plus bands of that coordinate for them, or a remainder
p % q as p plus one step per wrap, each its own direction. Pure numpy over the map's rows."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from compiler.blocks import Atom, is_number
from compiler.mlp import MAX_MLP_PAIRS

# Directions s = a·x + b·y tried, in this order (the fewest bands wins; ties: the first).
DIRECTIONS = ((1, 0), (0, 1), (1, -1), (1, 1), (2, -1), (1, -2), (2, 1), (1, 2))
MAX_BANDS = 4  # more bands: a step MLP over one number does as well
# `fit`'s second try: the first few values of either input left to bands of their own.
EXCEPTION_DIRECTIONS = ((0, 1), (1, 0))
MAX_EXCEPTIONS = 4
# `fit`'s last try, a remainder p % q (`_wraps`): one component per wrap, of up to 4 units each,
# so at most this many wraps times rows (a quarter of the (input, unit) pairs an MLP may have,
# `mlp.MAX_MLP_PAIRS`): `(w + 3) % length` wraps 256 times over 65,792 rows at N = 256.
MAX_WRAP_ROWS = MAX_MLP_PAIRS // 4
# Inputs beyond this: no such map is planned (pre-activations grow as their squares).
MAX_WHOLE = 2**20
GRID = 2**10  # coefficients are multiples of 1/GRID: exact products with whole numbers
Rows = Sequence[tuple[tuple[Atom, ...], Atom]]


@dataclass(frozen=True)
class Band:
    start: int  # the least s of the band
    coef: tuple[float, float, float]  # the map on the band: coef[0]·x + coef[1]·y + coef[2]
    value: Atom  # the map's value at the band's first row (its value, where it is constant)


@dataclass(frozen=True)
class Bands:
    direction: tuple[int, int]
    bands: tuple[Band, ...]


Banded = tuple[Bands, ...]  # the map is the sum of these components


def fit(rows: Rows) -> Banded | None:
    """The map as a sum of banded components: bands of one direction (`bands_of`), else bands of
    one direction where the least few values of the position or the length are left out, plus
    bands of that coordinate for what they leave (None: neither). `(indices + 2) % length` wraps
    twice at length 1: no few bands of one direction hold it, but bands of i - length from length
    2 on do, and what they give at length 1 is off by a constant there."""
    arrays = _arrays(rows)
    if arrays is None:
        return None
    xy, f = arrays
    outputs = [out for _, out in rows]
    single = _best_bands(xy, f, outputs)
    if single is not None:
        return (single,)
    for coordinate in EXCEPTION_DIRECTIONS:
        s = xy @ np.array(coordinate, dtype=np.float64)  # [rows]
        for start in np.unique(s)[1 : 1 + MAX_EXCEPTIONS].tolist():
            regular = s >= start
            kept = [out for out, keep in zip(outputs, regular.tolist()) if keep]
            main = _best_bands(xy[regular], f[regular], kept)
            if main is None:
                continue
            rest = f - _evaluate(main, xy)  # 0 where the main bands hold (exact: dyadic)
            if np.any(rest[regular] != 0.0):
                continue
            extra = _bands_along(coordinate, xy, rest, list(rest), MAX_BANDS)
            if extra is not None:
                return (main, extra)
    return _wraps(xy, f)


# The remainders `_wraps` tries, p % q: p = a·x + b·y + c with a, b in {-1, 0, 1} (c found from
# the rows), q = one input + k.
DIVIDENDS = ((1, 0), (0, 1), (-1, 1), (1, -1), (1, 1), (-1, 0), (0, -1))
MODULUS_SHIFTS = (0, 1, -1, 2)
SAMPLE = 4096  # rows a candidate is first checked on (a failed one costs no more)


def _wraps(xy: np.ndarray, f: np.ndarray) -> Banded | None:
    """A remainder p % q (`(indices + 5) % length`, `(length - indices - 16) % (length + 1)`) with p
    and q affine (q >= 1 at every row) as p plus one step per wrap: p - q·floor(p / q), where

        floor(p / q) = sum_{j >= 1} [p - j·q >= 0] - sum_{j >= 1} [-p - (j - 1)·q >= 1]

    (the j-th wrap up, a step of height -q along p - j·q's direction, and down, +q along
    -p - (j - 1)·q's), as many of each as the rows wrap: one component of two bands per wrap, at
    most MAX_WRAP_ROWS wraps times rows."""
    if not len(f):
        return None
    sample = slice(0, SAMPLE)
    for axis, k in itertools.product((1, 0), MODULUS_SHIFTS):
        q_coef = np.zeros(3)
        q_coef[axis], q_coef[2] = 1.0, float(k)
        q = xy @ q_coef[:2] + q_coef[2]
        if q.min() < 1:
            continue
        row = int(np.argmax(q))  # the largest modulus: c mod q there
        for a, b in DIVIDENDS:
            base = xy[:, 0] * a + xy[:, 1] * b  # [rows]
            c0 = int(f[row] - base[row])
            for c in sorted({c0, c0 - int(q[row]), c0 + int(q[row])}, key=abs):
                if not np.array_equal(np.mod(base[sample] + c, q[sample]), f[sample]):
                    continue
                if not np.array_equal(np.mod(base + c, q), f):
                    continue
                found = _wrap_components(xy, np.array([a, b, c], dtype=np.float64), q_coef)
                if found is not None and np.array_equal(sum(_evaluate(x, xy) for x in found), f):
                    return found
    return None


def _wrap_components(xy: np.ndarray, p_coef: np.ndarray, q_coef: np.ndarray) -> Banded | None:
    p = xy @ p_coef[:2] + p_coef[2]
    q = xy @ q_coef[:2] + q_coef[2]
    wraps = np.floor_divide(p, q)  # [rows]
    ups, downs = int(max(wraps.max(), 0)), int(max(-wraps.min(), 0))
    if ups + downs == 0 or (ups + downs) * len(p) > MAX_WRAP_ROWS:
        return None  # no wrap (an affine map: found before), or more steps than an MLP may have
    # [p - j·q >= 0] with height -q; [-p - (j - 1)·q >= 1] with height +q
    steps = [(p_coef - j * q_coef, -q_coef) for j in range(1, ups + 1)]
    steps += [(-p_coef - (j - 1) * q_coef - (0, 0, 1), q_coef) for j in range(1, downs + 1)]
    base = p_coef.copy()
    components = []
    for test, height in steps:  # [test >= 0]: along test[:2], from s = -test[2] on
        direction = _direction(test)
        start = int(-test[2])
        s = xy @ np.array(direction, dtype=np.float64)
        if s.min() >= start:
            base = base + height  # on at every row: part of the affine map
            continue
        if s.max() < start:
            continue  # off at every row
        bands = (Band(int(s.min()), (0.0, 0.0, 0.0), 0.0), Band(start, _coef(height), 0.0))
        components.append(Bands(direction, bands))
    return (Bands(_direction(base), (Band(0, _coef(base), 0.0),)), *components)


def _direction(coef: np.ndarray) -> tuple[int, int]:
    return int(coef[0]), int(coef[1])


def _coef(c: np.ndarray) -> tuple[float, float, float]:
    return float(c[0]), float(c[1]), float(c[2])


def _evaluate(found: Bands, xy: np.ndarray) -> np.ndarray:
    """The banded map at every row [rows] (each row's band by its s)."""
    s = xy @ np.array(found.direction, dtype=np.float64)
    starts = np.array([b.start for b in found.bands], dtype=np.float64)
    band = np.clip(np.searchsorted(starts, s, side="right") - 1, 0, len(starts) - 1)
    coef = np.array([b.coef for b in found.bands])[band]  # [rows, 3]
    return coef[:, 0] * xy[:, 0] + coef[:, 1] * xy[:, 1] + coef[:, 2]


def _arrays(rows: Rows) -> tuple[np.ndarray, np.ndarray] | None:
    """(xy [rows, 2], f [rows]) as float64, or None where the inputs are not whole numbers (at
    most MAX_WHOLE) or a value is not a number."""
    if not rows:
        return None
    if not all(is_number(v) or isinstance(v, bool) for combo, out in rows for v in (*combo, out)):
        return None
    xy = np.array([[float(c) for c in combo] for combo, _ in rows], dtype=np.float64)
    if xy.shape[1] != 2 or not np.all(xy == np.round(xy)) or np.abs(xy).max() > MAX_WHOLE:
        return None
    return xy, np.array([float(out) for _, out in rows], dtype=np.float64)


def bands_of(rows: Rows) -> Bands | None:
    """The fewest bands of one direction on which the map is affine (None: more than MAX_BANDS,
    or inputs that are not whole numbers, or outputs that are not numbers)."""
    arrays = _arrays(rows)
    if arrays is None:
        return None
    return _best_bands(*arrays, [out for _, out in rows])


def _best_bands(xy: np.ndarray, f: np.ndarray, outputs: Sequence[Atom]) -> Bands | None:
    best: Bands | None = None
    for direction in DIRECTIONS:
        most = MAX_BANDS if best is None else len(best.bands) - 1
        found = _bands_along(direction, xy, f, outputs, most)
        if found is not None:
            best = found
            if len(found.bands) == 1:
                break
    return best


def _bands_along(
    direction: tuple[int, int],
    xy: np.ndarray,
    f: np.ndarray,
    outputs: Sequence[Atom],
    most: int,
) -> Bands | None:
    """The map's bands along s = a·x + b·y, greedily longest first (optimal: a band's subset is
    affine too), or None beyond `most` bands."""
    if most < 1:
        return None
    s = xy @ np.array(direction, dtype=np.float64)  # [rows]: whole numbers
    order = np.argsort(s, kind="stable")
    s, xy, f = s[order], xy[order], f[order]
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])  # first row of each value of s
    ends = np.r_[starts[1:], len(s)]
    bands: list[Band] = []
    first = 0
    while first < len(starts):
        if len(bands) == most:
            return None

        def fit(last: int, first: int = first) -> tuple[float, float, float] | None:
            lo, hi = starts[first], ends[last]
            return _exact_fit(xy[lo:hi], f[lo:hi])

        coef = fit(first)
        if coef is None:
            return None  # not affine even on one line of s
        good, bad, step = first, None, 1
        while bad is None and good < len(starts) - 1:  # gallop, then bisect
            probe = min(good + step, len(starts) - 1)
            got = fit(probe)
            if got is None:
                bad = probe
            else:
                good, coef, step = probe, got, step * 2
        while bad is not None and bad - good > 1:
            mid = (good + bad) // 2
            got = fit(mid)
            if got is None:
                bad = mid
            else:
                good, coef = mid, got
        bands.append(Band(int(s[starts[first]]), coef, outputs[int(order[starts[first]])]))
        first = good + 1
    return Bands(direction, tuple(bands))


def _exact_fit(xy: np.ndarray, f: np.ndarray) -> tuple[float, float, float] | None:
    """Dyadic (a, b, c) with a·x + b·y + c == f at every row, exactly; the fewest non-zero
    coefficients first (rows on one line leave the fit free: the plainest is kept)."""
    ones = np.ones(len(f))
    for used in ((), (0,), (1,), (0, 1)):
        design = np.column_stack([xy[:, k] for k in used] + [ones])  # [rows, len(used) + 1]
        sol, *_ = np.linalg.lstsq(design, f, rcond=None)
        sol = np.round(sol * GRID) / GRID
        if np.abs(sol).max() > MAX_WHOLE or not np.array_equal(design @ sol, f):
            continue
        coef = [0.0, 0.0, float(sol[-1])]
        for k, value in zip(used, sol[:-1], strict=True):
            coef[k] = float(value)
        return coef[0], coef[1], coef[2]
    return None
