"""Dyadic grids for the certifier's exact-sum test: the least k with every entry·2^k an integer.

A sum of products of entries on grids 2^-g and 2^-k is on the grid 2^-(g + k), and exact in any
order while below 2^24 of its steps. Split from `compiler.bounds` (which re-exports them); the
weight matrices of a large compile are hundreds of MB, so `column_grid` reads only their non-zero
entries rather than copying them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def column_grid(
    weights: np.ndarray,
    bias: np.ndarray,
    skip_rows: Sequence[int] = (),
    nonzero: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """Per column of a weight matrix and its bias: the least k with every entry·2^k an integer,
    negative where they are all multiples of 2^-k (matching's query entries -c·q^2, c = 2^8). A sum
    of products with inputs on a grid 2^-g is then on the grid 2^-(g + k): exact in any order while
    below 2^24 of its steps (|sum| < 2^(24 - g - k)). `skip_rows`: rows left out (BOS's and PAD's,
    exact zeros at real positions). Equal to `row_grid` of the weights' kept rows and the bias
    stacked and transposed, without building that copy. `nonzero`: np.nonzero(weights), where
    the caller has it already."""
    w = np.asarray(weights)
    rows, cols = np.nonzero(w) if nonzero is None else nonzero
    if len(skip_rows):
        keep = ~np.isin(rows, np.asarray(skip_rows))
        rows, cols = rows[keep], cols[keep]
    b = np.asarray(bias, dtype=np.float64)
    on = np.flatnonzero(b)
    index = np.concatenate([cols, on])
    x = np.concatenate([np.abs(w[rows, cols].astype(np.float64)), np.abs(b[on])])
    return _grids(index, x, w.shape[1], 60)


def row_grid(values: np.ndarray, limit: int = 60) -> np.ndarray:
    """Per row of a 2-D array: the least k with every entry·2^k an integer, negative where all the
    row's entries are whole multiples of 2^-k (c·q and c·q^2 with c = 2^8: k = -8), -limit for a
    zero row, 99 where some entry needs more than `limit` bits. Products of two rows' entries are
    then multiples of 2^-(k1 + k2), and a sum of them below 2^24 such steps is exact in any order."""
    v = np.abs(np.asarray(values, dtype=np.float64))
    # weights are mostly zeros (a one-hot's rows): the bit arithmetic runs on the others only
    rows, cols = np.nonzero(v)
    return _grids(rows, v[rows, cols], v.shape[0], limit)


def _grids(index: np.ndarray, x: np.ndarray, n: int, limit: int) -> np.ndarray:
    """Per slot 0..n-1, the grid of the non-zero magnitudes x that `index` puts there."""
    out = np.full(n, -limit, dtype=np.int64)
    if index.size:
        finite = np.isfinite(x)
        mant, exp = np.frexp(np.where(finite, x, 1.0))  # x = mant·2^exp, mant in [0.5, 1)
        whole = (mant * 2.0**53).astype(np.int64)  # x = whole·2^(exp - 53)
        trailing = np.log2(whole & -whole).astype(np.int64)
        k = np.where(finite, np.clip(53 - exp - trailing, -limit, None), 99)
        np.maximum.at(out, index, k)  # a maximum: the entries' order does not matter
    return np.where(out > limit, 99, out)


def dyadic_exponent(values: np.ndarray, limit: int = 60) -> np.ndarray:
    """Elementwise: the least k >= 0 with value·2^k an integer (99 beyond `limit`)."""
    v = np.abs(np.asarray(values, dtype=np.float64))
    # Most values are whole numbers (k = 0): the bit arithmetic below runs on the others only.
    whole_number = v == np.floor(v)  # inf too (floor(inf) = inf): sent to the slow path below
    whole_number &= v < np.inf
    if whole_number.all():
        return np.zeros(v.shape, dtype=np.int64)
    if v.ndim and whole_number.mean() > 0.5:
        out = np.zeros(v.shape, dtype=np.int64)
        rest = ~whole_number
        out[rest] = _dyadic_exponent(v[rest], limit)
        return out
    return _dyadic_exponent(v, limit)


def dyadic_column_max(values: np.ndarray) -> np.ndarray:
    """`dyadic_exponent(values).max(axis=0)` of a 2-D array with rows, from its non-zero entries
    alone (a zero's exponent is 0, the least there is): the token embedding over 5,000 tokens is
    200 MB with 5,000 of them, and the elementwise passes took 1.7 s of its certificate."""
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 2 or v.shape[0] == 0:
        return dyadic_exponent(v).max(axis=0)  # (its own answer, or error, for these)
    rows, cols = np.nonzero(v)  # (NaN is not zero: its 99 counts)
    out = np.zeros(v.shape[1], dtype=np.int64)
    np.maximum.at(out, cols, dyadic_exponent(v[rows, cols]))
    return out


def _dyadic_exponent(v: np.ndarray, limit: int) -> np.ndarray:
    finite = np.isfinite(v)
    mant, exp = np.frexp(np.where(finite, v, 0.0))  # v = mant·2^exp, mant in [0.5, 1)
    whole = (mant * 2.0**53).astype(np.int64)  # v = whole·2^(exp - 53)
    lowest = whole & -whole  # its lowest set bit
    trailing = np.log2(np.maximum(lowest, 1)).astype(np.int64)
    k = np.maximum(53 - exp - trailing, 0)
    k = np.where(v == 0, 0, k)
    return np.where(finite & (k <= limit), k, 99)
