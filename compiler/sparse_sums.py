"""Products with mostly-zero matrices, formed from their non-zeros: `sparse_product` of a
certifier's points (few units on at a point) with W_out's rows (`SparseRows`, prepared once), and
`concrete_products` of a few concrete residuals (BOS, PAD) with a padded weight matrix; `Spread`,
one support's `sparse_product`s with several matrices of one non-zero pattern.

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

import copy

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
    entries: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """x @ W, (|x| + err) @ |W| and err @ |W| for states x [S, D] (or one state [D]) with errors
    err and W [D, C] (float64, or float32: converted as read, the same float64 numbers);
    `nonzero`: np.nonzero(W), where the caller has it already. `entries`: the size of the padded
    matrix W is a head's own slice of (`compiler.head_slices`), which chooses the dense or the
    sparse sums as it chose them for the padded matrix (the same sums, in the same order)."""
    if nonzero is None:
        nnz = np.count_nonzero(weights)
    else:
        nnz = len(nonzero[0])
    if nnz >= SPARSE_BELOW * (weights.size if entries is None else entries):
        weights = np.asarray(weights, dtype=np.float64)
        abs_w = np.abs(weights)
        return x @ weights, (np.abs(x) + err) @ abs_w, err @ abs_w
    if x.ndim == 1:
        value, size, carried = concrete_products(x[None], err[None], weights, nonzero, entries)
        return value[0], size[0], carried[0]
    signed = SparseRows(weights, nonzero)
    magnitudes = signed.magnitudes()
    return (
        sparse_product(x, signed),
        sparse_product(np.abs(x) + err, magnitudes),
        sparse_product(err, magnitudes),
    )


class SparseRows:
    """The non-zero entries of w [H, O], grouped by row: prepared once for many `sparse_product`s
    (the certifier multiplies every chunk of points by the same W_out)."""

    def __init__(self, w: np.ndarray, nonzero: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        self.shape = w.shape
        # row-major (np.nonzero's order, also of a caller's `nonzero`): grouped by unit
        self.rows, self.cols = np.nonzero(w) if nonzero is None else nonzero
        self.values = w[self.rows, self.cols]
        self.per_unit = np.bincount(self.rows, minlength=w.shape[0])  # [H]
        self.starts = np.concatenate([[0], np.cumsum(self.per_unit)[:-1]])

    def magnitudes(self) -> SparseRows:
        """|w|'s entries, without a dense |w|."""
        out = copy.copy(self)
        out.values = np.abs(self.values)
        return out


def sparse_product(
    a: np.ndarray,
    w: np.ndarray | SparseRows,
    support: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """a [P, H] @ w [H, O] where both are mostly zero (few units are on at a point, and an MLP's
    output rows write one or two dims): only the non-zero products are formed.

    `support`: (points, units) in row-major order, holding every non-zero of `a` (np.nonzero of
    a wider mask): its other entries are exact zeros, whose ±0 products leave every sum as it is."""
    P, O = a.shape[0], w.shape[1]  # noqa: E741 (the shapes [P, H] @ [H, O] of the docstring)
    pts, units = np.nonzero(a) if support is None else support
    if len(pts) == 0:
        return np.zeros((P, O))
    sw = w if isinstance(w, SparseRows) else SparseRows(w)
    per_unit, starts = sw.per_unit, sw.starts
    counts = per_unit[units]  # entries each (point, unit) expands into
    keep = counts > 0
    pts, units, counts = pts[keep], units[keep], counts[keep]
    if len(pts) == 0:
        return np.zeros((P, O))
    rep_pts = np.repeat(pts, counts)
    offset = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    entry = np.repeat(starts[units], counts) + offset  # index into (w_rows, w_cols)
    values = np.repeat(a[pts, units], counts) * sw.values[entry]
    flat = rep_pts * O + sw.cols[entry]
    return np.bincount(flat, weights=values, minlength=P * O).reshape(P, O)


class Spread:
    """`sparse_product` over one support (the active units) for several matrices with W_out's
    non-zero pattern: the support's expansion into W_out's rows is found once. Same products,
    same order, same sums as `sparse_product(a, w, support)`."""

    def __init__(self, support: tuple[np.ndarray, np.ndarray], w: SparseRows, P: int) -> None:
        pts, units = support
        self.P, self.O = P, w.shape[1]
        counts = w.per_unit[units]  # entries each (point, unit) expands into
        self.keep = counts > 0
        pts, units, counts = pts[self.keep], units[self.keep], counts[self.keep]
        self.counts = counts
        self.empty = len(pts) == 0
        offset = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
        self.entry = np.repeat(w.starts[units], counts) + offset  # into (w.rows, w.cols)
        self.flat = np.repeat(pts, counts) * self.O + w.cols[self.entry]

    def product(self, values: np.ndarray, w: SparseRows) -> np.ndarray:
        """a @ w where a is zero off the support and `values` [len(support)] on it."""
        if self.empty:
            return np.zeros((self.P, self.O))
        products = np.repeat(values[self.keep], self.counts) * w.values[self.entry]
        return np.bincount(self.flat, weights=products, minlength=self.P * self.O).reshape(
            self.P, self.O
        )
