"""The attention scores of one chunk of queries against every key, with the bound on each score's
float32 error (`compiler.certify_attention._scores` checks the softmax's saturation on them).

`score_bounds` gives the very floats `score_bounds_general` (the bound's formula as written) gives,
with fewer products: the keys' side is prepared once per head (`KeySide`), and where neither side
carries an input error (every score of the program's own readings, most heads) the error terms
that are products with a zero error are exact zeros and are not computed (each matrix product is
an OpenBLAS call: at N = 256 the certifier of `most_freq` spent a second in them).
"""

from __future__ import annotations

import numpy as np

from compiler.bounds import SLACK, U, gamma, overflowed, row_grid


class KeySide:
    """What the bound needs of the keys (value and error [K, d_head]), computed once per head."""

    def __init__(self, k: np.ndarray, ke: np.ndarray) -> None:
        self.k, self.ke = k, ke
        self.abs = np.abs(k)
        self.total = self.abs + ke  # |k| + its error
        self.nonzero = (self.total > 0) * 1.0
        self.grid = row_grid(k)
        self.exact = ke.max(axis=1) == 0  # (an empty d_head raises, as the formula did)
        # no error and nothing that a zero error times would make NaN (inf * 0)
        self.errorless = not ke.any() and bool(np.isfinite(self.abs).all())


def score_bounds(
    qs: np.ndarray, qe: np.ndarray, keys: KeySide, scale: float, scale_exact: bool
) -> tuple[np.ndarray, np.ndarray]:
    """(scores [rows, keys], each one's error bound) for queries `qs` with errors `qe`; the same
    floats as `score_bounds_general`."""
    if not (keys.errorless and not qe.any() and np.isfinite(qs).all()):
        return score_bounds_general(qs, qe, keys.k, keys.ke, scale, scale_exact)
    # Every error is ±0.0 and every |value| finite: |q| + qe is |q| (x + ±0.0 = x for x >= +0.0),
    # so the last product of the general bound is |q| @ |k|, the one `size` takes; the three
    # products with an error are ±0.0 each, and (±0.0 + ±0.0 + ±0.0) + x is x for x >= +0.0.
    abs_q = np.abs(qs)
    s = qs @ keys.k.T / scale
    g = gamma(((abs_q > 0) * 1.0) @ keys.nonzero.T)
    magnitude = abs_q @ keys.abs.T
    err = (g * magnitude) / scale
    grid = row_grid(qs)[:, None] + keys.grid[None, :]
    size = np.ldexp(magnitude, np.minimum(grid, 60))
    exact = (qe.max(axis=1)[:, None] == 0) & keys.exact[None, :] & (grid <= 60) & (size < 2.0**24)
    err = np.where(exact, 0.0, err * SLACK)
    if not scale_exact:
        err = err + 4 * U * SLACK * magnitude / scale
    return s, overflowed(err, magnitude)


def score_bounds_general(
    qs: np.ndarray,
    qe: np.ndarray,
    all_k: np.ndarray,
    all_ke: np.ndarray,
    scale: float,
    scale_exact: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """The bound as its formula reads, for any errors: `score_bounds`' reference."""
    s = qs @ all_k.T / scale  # [rows, keys]
    # products that can be non-zero per (query, key): n of gamma_n
    g = gamma((((np.abs(qs) + qe) > 0) * 1.0) @ (((np.abs(all_k) + all_ke) > 0) * 1.0).T)
    err = (
        np.abs(qs) @ all_ke.T
        + qe @ np.abs(all_k).T
        + qe @ all_ke.T
        + g * ((np.abs(qs) + qe) @ (np.abs(all_k) + all_ke).T)
    ) / scale
    # Products of exact dyadic q and k whose sums stay within 2^24 grid steps are exact in
    # any order (and so is the scaling when sqrt(d_head) is a power of 2); a grid may be
    # coarser than the integers (matching's c·q, c·q^2: steps of 2^8).
    grid = row_grid(qs)[:, None] + row_grid(all_k)[None, :]
    size = np.ldexp(np.abs(qs) @ np.abs(all_k).T, np.minimum(grid, 60))
    exact = (
        (qe.max(axis=1)[:, None] == 0)
        & (all_ke.max(axis=1)[None, :] == 0)
        & (grid <= 60)
        & (size < 2.0**24)
    )
    err = np.where(exact, 0.0, err * SLACK)
    if not scale_exact:
        # 1/sqrt(d_head) is not a power of 2: the division (or scaling q first, as fused
        # kernels do) rounds each score, and the stored W_K carries a rounded sqrt(d_head)
        err = err + 4 * U * SLACK * ((np.abs(qs) + qe) @ (np.abs(all_k) + all_ke).T) / scale
    return s, overflowed(err, (np.abs(qs) + qe) @ (np.abs(all_k) + all_ke).T)
