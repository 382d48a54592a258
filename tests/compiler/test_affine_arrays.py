"""`affine_fits.affine_points_misfit` over many points (sorted and checked as arrays) against the
loop it replaced there, copied here from before the change: the same fit and misfit, or the same
None, bit for bit, over lines, near-lines, ints, bools, 0.0 beside -0.0, repeated xs, inf and
NaN."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import affine_fits
from compiler.affine_fits import ARRAY_MIN_POINTS, affine_points_misfit, row_misfit
from compiler.blocks import is_number


def _old(points: list) -> tuple | None:
    if not all(is_number(v) or isinstance(v, bool) for _, v in points):
        return None
    pts = sorted({x: float(v) for x, v in points}.items())
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


def _spelled(found: tuple | None) -> str:
    return repr(found)  # (repr tells -0.0 from 0.0 and spells NaN)


_X = st.one_of(
    st.integers(-40, 40).map(lambda k: k / 8),
    st.sampled_from([0.0, -0.0, 1e-300, 3.0, 1 / 3, 2.0**60]),
)


@settings(max_examples=200, deadline=None)
@given(
    xs=st.lists(_X, min_size=ARRAY_MIN_POINTS, max_size=3 * ARRAY_MIN_POINTS),
    a=st.sampled_from([0.0, -0.0, 2.0, -0.5, 1 / 3, 1e300]),
    b=st.sampled_from([0.0, -0.0, 1.0, 0.1]),
    noise=st.lists(
        st.tuples(st.integers(0, 300), st.sampled_from([1e-12, 1e-3, math.inf, math.nan, True, 7]))
    ),
)
def test_arrays_as_the_loop(xs: list, a: float, b: float, noise: list) -> None:
    points: list = [(x, a * x + b) for x in xs]
    for at, value in noise:
        if at < len(points):
            x, y = points[at]
            points[at] = (x, value if isinstance(value, bool) or value in (7,) else y + value)
    with np.errstate(all="ignore"):
        old = _old(points)
    assert _spelled(affine_points_misfit(points)) == _spelled(old)


def test_the_arrays_are_used(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Many distinct float xs take the arrays; fewer, or an int x, the loop."""
    used: list[int] = []
    arrays = affine_fits._affine_arrays
    monkeypatch.setattr(affine_fits, "_affine_arrays", lambda t: used.append(len(t)) or arrays(t))
    line = [(k / 7, 3 * (k / 7) + 1) for k in range(ARRAY_MIN_POINTS)]
    assert affine_points_misfit(line) == _old(line)
    assert affine_points_misfit(line[:-1]) == _old(line[:-1])
    ints = [(k, 2 * k) for k in range(ARRAY_MIN_POINTS)]
    assert affine_points_misfit(ints) == _old(ints)
    assert used == [ARRAY_MIN_POINTS]
