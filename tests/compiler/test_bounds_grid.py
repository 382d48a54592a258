"""compiler.bounds.row_grid, the dyadic grid of each row of a weight matrix (the certifier's test
that a sum is exact in any order), against an entry-by-entry reference in exact fractions; the
sparse column_grid and special_linear against the dense forms they replaced."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from compiler.bounds import (
    SLACK,
    column_grid,
    dyadic_exponent,
    gamma,
    overflowed,
    row_grid,
    special_linear,
)


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


def _dense_column_grid(weights: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """column_grid as it was: the weights and bias stacked, transposed and read row by row."""
    return row_grid(np.vstack([weights, bias[None, :]]).T)


def _dense_special_linear(
    x: np.ndarray, e: np.ndarray, W: np.ndarray, bias: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """special_linear as it was, on dense copies of W (the reference for the sparse one)."""
    value = x @ W + bias
    n = np.count_nonzero(W, axis=0) + 1
    size = (np.abs(x) + e) @ np.abs(W) + np.abs(bias)
    w_grid = _dense_column_grid(W, bias)
    reads = (W != 0).astype(np.float64)
    x_grid = dyadic_exponent(x)
    finest = np.zeros((x.shape[0], W.shape[1]), dtype=np.int64)
    for k in np.unique(x_grid[x_grid > 0]):
        hit = ((x_grid >= k).astype(np.float64) @ reads) > 0
        finest = np.where(hit, np.maximum(finest, k), finest)
    steps = finest + w_grid[None, :]
    exact = (
        ((e @ np.abs(W)) == 0) & (steps <= 60) & (np.ldexp(size, np.minimum(steps, 60)) < 2.0**24)
    )
    error = np.where(exact, 0.0, (e @ np.abs(W) + gamma(n) * size) * SLACK)
    return value, overflowed(error, size)


def _sparse_matrix(rng: np.random.Generator, shape: tuple[int, int], pool: list) -> np.ndarray:
    values = rng.choice(pool, size=shape)
    return np.where(rng.random(shape) < 0.6, 0.0, values)


def test_the_sparse_column_grid_equals_the_dense_one() -> None:
    """column_grid reads only the non-zero entries (a d_model x 15,000 W_in is not copied): the
    same grids as stacking and transposing, with skipped rows as deleted ones."""
    rng = np.random.default_rng(1)
    pool = [0.0, 1.0, 0.5, 3.0, 256.0, 2.0**-70, 2.0**70, 1 / 3, -0.25, 12.375, 2.0**-61]
    pool += [math.inf, -math.inf, math.nan, -0.0]
    for _ in range(500):
        rows, cols = rng.integers(1, 7, 2)
        weights = _sparse_matrix(rng, (rows, cols), pool)
        bias = _sparse_matrix(rng, (1, cols), pool)[0]
        assert column_grid(weights, bias).tolist() == _dense_column_grid(weights, bias).tolist()
        skip = sorted({int(r) for r in rng.integers(0, rows, 2)})
        kept = np.delete(weights, skip, axis=0)
        want = _dense_column_grid(kept, bias).tolist()
        assert column_grid(weights, bias, skip_rows=skip).tolist() == want


def test_the_sparse_special_linear_equals_the_dense_one() -> None:
    """special_linear (BOS/PAD rows through a block) without dense copies of W: the same values
    and error bounds, bit for bit."""
    rng = np.random.default_rng(2)
    w_pool = [1.0, -1.0, 0.5, 3.0, 2.0**-10, 1 / 3, 256.0, -7.0]
    x_pool = [0.0, 0.0, 1.0, 0.25, 1 / 3, 2.0**-30, 5.0, 0.1]
    for _ in range(300):
        s, d, c = int(rng.integers(1, 3)), int(rng.integers(1, 9)), int(rng.integers(1, 9))
        W = _sparse_matrix(rng, (d, c), w_pool)
        bias = _sparse_matrix(rng, (1, c), w_pool)[0]
        x = rng.choice(x_pool, size=(s, d))
        e = np.where(rng.random((s, d)) < 0.7, 0.0, rng.choice([1e-7, 2e-6, 0.5], size=(s, d)))
        got, want = special_linear(x, e, W, bias), _dense_special_linear(x, e, W, bias)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
