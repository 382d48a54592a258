"""compiler.bounds.row_grid, the dyadic grid of each row of a weight matrix (the certifier's test
that a sum is exact in any order), against an entry-by-entry reference in exact fractions."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from compiler.bounds import column_grid, row_grid


def _reference(row: np.ndarray, limit: int) -> int:
    grids = []
    for x in row.tolist():
        if not math.isfinite(x):
            return 99
        if x == 0:
            continue
        f = Fraction(abs(x))
        if f.denominator > 1:
            k = f.denominator.bit_length() - 1  # a power of two: x has a finite binary expansion
        else:
            k = -((f.numerator & -f.numerator).bit_length() - 1)  # trailing zero bits
        grids.append(max(k, -limit))
    k = max(grids, default=-limit)
    return 99 if k > limit else k


def test_row_grid_equals_the_exact_reference() -> None:
    rng = np.random.default_rng(0)
    pool = [0.0, 0.0, 0.0, 1.0, 0.5, 3.0, 256.0, 2.0**-70, 2.0**70, 1 / 3, -0.25, 2.0**-8, 1e-300]
    pool += [math.inf, -math.inf, math.nan, 12.375, -7.0, 2.0**-60, 2.0**-61]
    for _ in range(2000):
        rows, cols = rng.integers(0, 6, 2)
        values = rng.choice(pool, size=(rows, cols))
        for limit in (60, 10):
            want = [_reference(row, limit) for row in values]
            assert row_grid(values, limit).tolist() == want, values


def test_column_grid_reads_each_column_with_its_bias() -> None:
    weights = np.array([[0.5, 0.0, 4.0], [0.0, 0.0, 1.0]])
    bias = np.array([0.0, 0.125, 2.0])
    assert column_grid(weights, bias).tolist() == [1, 3, 0]
