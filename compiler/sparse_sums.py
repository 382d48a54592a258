"""Products of a few concrete residuals with a mostly-zero weight matrix, from its non-zeros.

The BOS and PAD residuals are evaluated concretely through every weight matrix (`bounds.special_linear`,
the heads' W_O, the MLPs' W_out). Those matrices are padded (a head's d_head is the widest head's,
an MLP's d_mlp the widest part's) and mostly zero: 5,192 x 4,096 with 8 non-zeros in mixed seed
1820364 at N = 16, where the dense products and |W| copies took half of the certificate's time.
Where a matrix is that sparse (`SPARSE_BELOW`), each column here sums its products in row order
from 0.0. A product with a zero weight is an exact ±0, which leaves a sum as it is, so these are
sums of the dense product's own terms: where they are exact (one-hot and whole-number data) the
same float64 number, elsewhere the same terms in another order, whose float64 rounding the
callers' SLACK covers as it covered BLAS's order. Denser matrices take the dense products.
"""

from __future__ import annotations

import numpy as np

# Below this share of non-zero weights the products are formed from the non-zeros; above it
# BLAS's dense products cost less (the library at N = 256: 257 BOS/PAD states through matrices
# of a few per cent non-zeros, where the sums over non-zeros took twice BLAS's time).
SPARSE_BELOW = 1 / 32


def concrete_products(
    x: np.ndarray,
    err: np.ndarray,
    weights: np.ndarray,
    nonzero: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """x @ W, (|x| + err) @ |W| and err @ |W| for states x [S, D] (or one state [D]) with errors
    err and W [D, C]; `nonzero`: np.nonzero(W), where the caller has it already."""
    if nonzero is None:
        nnz = np.count_nonzero(weights)
    else:
        nnz = len(nonzero[0])
    if nnz >= SPARSE_BELOW * weights.size:
        abs_w = np.abs(weights)
        return x @ weights, (np.abs(x) + err) @ abs_w, err @ abs_w
    if x.ndim == 1:
        value, size, carried = concrete_products(x[None], err[None], weights, nonzero)
        return value[0], size[0], carried[0]
    rows, cols = np.nonzero(weights) if nonzero is None else nonzero
    w = np.asarray(weights[rows, cols], dtype=np.float64)
    abs_w = np.abs(w)
    S, C = x.shape[0], weights.shape[1]
    # one bincount per quantity: slot s·C + c sums state s's products in column c, in row order
    slot = (np.arange(S)[:, None] * C + cols[None, :]).ravel()

    def summed(terms: np.ndarray) -> np.ndarray:  # [S, nnz] -> [S, C]
        if slot.size == 0:  # (bincount of nothing is of integers)
            return np.zeros((S, C))
        return np.bincount(slot, weights=terms.ravel(), minlength=S * C).reshape(S, C)

    value = summed(x[:, rows] * w)
    size = summed((np.abs(x) + err)[:, rows] * abs_w)
    carried = summed(err[:, rows] * abs_w)
    return value, size, carried
