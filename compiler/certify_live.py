"""How many terms of an MLP part's output sum can be non-zero at a point: the n of gamma_n in the
certifier's bound on that sum's float32 rounding (`compiler.certify_mlp`). The proof is in
`live_terms`."""

from __future__ import annotations

import copy

import numpy as np

from compiler.sparse_sums import SparseRows, Spread


def on_entries(spread: Spread) -> np.ndarray:
    """[P, O]: how many on units write each column at each point with a non-zero weight."""
    if spread.empty:
        return np.zeros((spread.P, spread.O))
    return np.bincount(spread.flat, minlength=spread.P * spread.O).reshape(spread.P, spread.O)


def live_terms(active: np.ndarray, columns: np.ndarray, n: np.ndarray) -> np.ndarray:
    """[P, O]: the terms of each output sum that can be non-zero in float32 at each point, for
    gamma_n of its rounding, where `n` [O] counts every non-zero weight of the column (+1 for
    the bias) and `active` [P, O] the part's units that may be on and write the column with a
    non-zero weight. Every other unit of the part is surely off, which the caller has CHECKED:
    in a decided part (every unit's |pre| > its error bound `total`), a unit with pre < 0 has a
    float32 pre-activation < 0 too; in a continuous one, pre + total <= 0. Its activation is
    then exactly +0.0, its product with W_out an exact ±0, and adding a ±0 to anything is exact.

    The float32 model: every product and every addition rounds with relative error at most
    u = 2^-24 (FMA rounds less), in ANY order or tree (blocking, threads, split-K). In such a
    tree, a subtree whose leaves are all exact zeros computes an exact 0, and an addition with
    an exact-0 operand returns the other operand unchanged; removing both leaves a tree over
    the k non-zero products alone with the same float32 result. That tree has k - 1 additions,
    so each product passes through at most k - 1 of them and rounds once itself: Higham's
    |fl(sum) - sum| <= gamma_k · sum |x_i·w_i| (gamma_k = k·u / (1 - k·u)) holds with k the
    non-zero products, not the column's weights. The terms (`h_sum` plus `total` times |W_out|)
    are already summed over the on units only; here k is counted the same way: this part's on
    units with a non-zero weight in the column, plus every other unit of the layer that writes
    the column (none, as parts claim their columns; counted anyway) and the bias. k <= n, so
    the bound never grows; with one unit on of 552 it is gamma_2 where it was gamma_553."""
    part_weights = np.bincount(columns, minlength=len(n))  # [O]: the part's weights per column
    return np.minimum(n[None, :], n[None, :] - part_weights[None, :] + active)


def ones(w: SparseRows) -> SparseRows:
    """w's non-zero pattern as ones (no dense copy)."""
    out = copy.copy(w)
    out.values = np.ones_like(w.values)
    return out
