"""Each attention head of a layer at its own width, for the certifier.

A layer stores W_Q, W_K, W_V [H, d_model, d_head], b_Q, b_K, b_V [H, d_head] and W_O
[H, d_head, d_model] at the layer's d_head: its widest head's, rounded up to a power of 4 where a
head averages keys. A narrower head's columns past its own are zeros (assembly fills each head's
columns from 0 up): mixed fuzz seed 1820364 at N = 16 pads a head whose W_Q and W_K hold 8 and
11 non-zeros, beside a 2,561-wide copy, to 4,096 columns. The certifier reads each head at its
own width instead, converted to float64 one head at a time: a head's query/key width is one past
the last column where W_Q, W_K, b_Q or b_K has an entry that is not an exact zero (a NaN or inf
counts), its value width one past the last where W_V or b_V (as columns) or W_O (as rows) has one.
The layer's d_head stays what the runtime divides the scores by (`HeadSlices.d_head`).

Why every bound stays an upper bound: a column past a head's own width has exact-zero weights and
bias, so every query and key (and value) is an exact 0 there at every position (the residual is
finite: `Walk.check_range`), and each of its products an exact ±0. Adding ±0 to a partial sum
leaves its value as it was (only a zero's sign can change), so any float32 evaluation of a padded
dot product, in any order, is an evaluation of the same non-zero terms without the zeros in some
order; Higham's bound holds for every order and already counts only non-zero products (`gamma`
of the non-zero terms). The certifier's own float64 sums (a score, a sum of |q|·|k|) lose exact
zero terms too: where they were exact they still are, elsewhere they are the same terms in
another order (BLAS may sum a narrower matrix's products in other blocks), within float64's
rounding of the exact value, which SLACK covers as it covered BLAS's order (never fixed: blocking
and threads). Where a count of the padded columns entered a bound or a budget (the factorized
check's PAD rounding, the selection check's pairs), the layer's d_head is counted still, and the
BOS and PAD rows take the dense or the sparse sums as the padded matrix did (the sparse ones in
the same order). So certificates and refusals are the padded reading's: to the last bit where the
sums are exact (every model `bench/model_hashes.py` compiles), elsewhere up to their last bits.

W_V and W_O are kept as stored (float32 views): what reads them either gathers their non-zeros
(`bounds.special_linear`, `sparse_sums.concrete_products`: the float32 values converted one by one,
the same float64 numbers), tests entries against zero, or converts a slice of them itself
(`Linear`), so a 2,561-wide copy's W_V and W_O are not copied to float64 whole.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from compiler.float64_weights import stored


@dataclass(frozen=True)
class HeadSlices:
    """One head's weights at its own widths."""

    wq: np.ndarray  # [d_model, qk] float64
    bq: np.ndarray  # [qk]
    wk: np.ndarray
    bk: np.ndarray
    wv: np.ndarray  # [d_model, vo] as stored (float32)
    bv: np.ndarray  # [vo]
    wo: np.ndarray  # [vo, d_model] as stored
    d_head: int  # the layer's: the scores are divided by its square root

    @property
    def qk(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return self.wq, self.bq, self.wk, self.bk


def own_width(used: np.ndarray) -> int:
    """One past the last True of `used` (per column: some entry not an exact zero), and at least
    1 where there are columns (a head of all zeros keeps one column: its checks' texts)."""
    hit = np.flatnonzero(used)
    return int(hit[-1]) + 1 if hit.size else min(1, used.size)


def head_slices(weights: Mapping[str, np.ndarray], layer: int, h: int) -> HeadSlices:
    """Head `h` of `layer` at its own query/key and value widths."""
    p = f"blocks.{layer}.attn."
    w_q, w_k, w_v = (stored(weights, p + n)[h] for n in ("W_Q", "W_K", "W_V"))
    b_q, b_k, b_v = (stored(weights, p + n)[h] for n in ("b_Q", "b_K", "b_V"))
    w_o = stored(weights, p + "W_O")[h]
    qk = own_width(_columns(w_q) | _columns(w_k) | (b_q != 0) | (b_k != 0))
    vo = own_width(_columns(w_v) | (b_v != 0) | _columns(w_o.T))
    f64 = np.float64
    return HeadSlices(
        np.array(w_q[:, :qk], dtype=f64),
        np.array(b_q[:qk], dtype=f64),
        np.array(w_k[:, :qk], dtype=f64),
        np.array(b_k[:qk], dtype=f64),
        w_v[:, :vo],
        b_v[:vo],
        w_o[:vo],
        int(w_o.shape[0]),
    )


def _columns(w: np.ndarray) -> np.ndarray:
    """Per column of w [rows, cols]: some entry is not an exact zero (NaN is not)."""
    return (w != 0).any(axis=0)
