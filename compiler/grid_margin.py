"""The certifier's margin of an output decoded on per-position (or per-length) grids.

Position i decodes round(x * d_i) / d_i, right while x drifts less than (1/2 - off) / d_i, off
being x's own distance from the grid (float64 noise) in steps of 1/d_i; x is on a grid where off
is at most `noise` times |x * d| (relative, as compiler.grid). The margin is the smallest over
every grid x lies on, and 0 (refused) for an x on none of them.

`grid_margin` tests every value against every grid: P values times D grids, which at N = 1500
(frac_prevs: 680K values, 1500 grids) took 32 of the compile's 148 s. A value on grid d is within
a hair of some k / d, so `_sparse` visits, per grid, only the values in a window around each
k / d, found by binary search over the sorted values: about as many as lie on the grid (1.4M in
all for frac_prevs, under a second). Each visited pair is computed by the same float64
expressions as before, and the windows hold every value the test can find on the grid (below),
so the margins are the same numbers, bit for bit.
"""

from __future__ import annotations

import math

import numpy as np

# |x - k/d| <= WINDOW * |k| / d + TINY holds for every x that is on grid d at k: on means
# |s - k| <= noise * |s| for s = fl(x * d), so |x * d - k| <= noise * |k| * (1 + 2 noise) plus
# s's own rounding (2^-53 |s|); WINDOW leaves a factor over 2 for noise = 1e-9, and at k = 0 only
# s = 0 is on (x = 0, or a product that underflows: |x| < 5e-324). MAX_NOISE is that argument's
# limit, not a tolerance: a larger noise takes the dense pass, as a window too narrow would miss
# a grid x is on, whose smaller margin the minimum then lost (tests/compiler/test_grid_margin.py)
MAX_NOISE = 1e-9
WINDOW = 2.5e-9
TINY = 1e-300
# the sparse walk's k's must be exact floats (windows that overlap, past |k| = 2e8, only visit a
# value twice for one grid: the same margin, written twice)
MAX_K = 2.0**50


def grid_margin(x: np.ndarray, denominators: list[int], noise: float) -> np.ndarray:
    """Per value of `x` [P], its margin on the grids `denominators` (module doc)."""
    grids = sorted({int(d) for d in denominators})
    finite = np.isfinite(x)
    if not grids or noise > MAX_NOISE or not finite.any():
        return _dense(x, grids, noise)
    low, high = float(x[finite].min()), float(x[finite].max())
    if max(abs(low), abs(high)) * grids[-1] >= MAX_K:
        return _dense(x, grids, noise)
    windows = sum(math.ceil(high * d) - math.floor(low * d) + 3 for d in grids)
    if 4 * windows > x.size * len(grids):  # hardly fewer than the dense pass's pairs
        return _dense(x, grids, noise)
    return _sparse(x, grids, noise, finite, low, high)


def _dense(x: np.ndarray, grids: list[int], noise: float) -> np.ndarray:
    margin = np.full(x.shape, np.inf)  # [P]
    on_any = np.zeros(x.shape, dtype=bool)
    for d in grids:  # one pass per grid: memory stays [P]
        # a product that is not finite (x inf or nan, or |x * d| past float64's range: inf, no
        # warning) is on no grid; it is left out, rather than computing inf - inf = nan, whose
        # comparison said the same with a RuntimeWarning
        with np.errstate(over="ignore"):
            scaled = x * d
        seen = np.flatnonzero(np.isfinite(scaled))
        scaled = scaled[seen]
        off = np.abs(scaled - np.rint(scaled))  # in grid steps
        on = off <= noise * np.abs(scaled)  # relative, as compiler.grid: 1e-12 is not 0
        hit = seen[on]
        margin[hit] = np.minimum(margin[hit], ((0.5 - off) / d)[on])
        on_any[hit] = True
    return np.where(on_any, margin, 0.0)


def _sparse(
    x: np.ndarray, grids: list[int], noise: float, finite: np.ndarray, low: float, high: float
) -> np.ndarray:
    margin = np.full(x.shape, np.inf)
    on_any = np.zeros(x.shape, dtype=bool)
    where = np.flatnonzero(finite)
    order = np.argsort(x[where], kind="stable")
    values, where = x[where][order], where[order]  # the finite values, sorted, and their indices
    for d in grids:
        k = np.arange(math.floor(low * d) - 1, math.ceil(high * d) + 2, dtype=np.float64)
        centre, half = k / d, WINDOW * np.abs(k) / d + TINY
        start = np.searchsorted(values, centre - half, side="left")
        stop = np.searchsorted(values, centre + half, side="right")
        counts = stop - start
        if not counts.any():
            continue
        # every index in each [start, stop), in one array
        firsts = np.repeat(start - np.concatenate(([0], np.cumsum(counts)[:-1])), counts)
        seen = where[firsts + np.arange(int(counts.sum()))]
        scaled = x[seen] * d  # the same expressions as `_dense`, on the values visited
        off = np.abs(scaled - np.rint(scaled))
        on = off <= noise * np.abs(scaled)
        hit = seen[on]
        margin[hit] = np.minimum(margin[hit], ((0.5 - off) / d)[on])
        on_any[hit] = True
    return np.where(on_any, margin, 0.0)
