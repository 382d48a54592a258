"""The certifier's BOS and PAD rows: where what a sublayer adds there is exact in float32.

BOS and PAD queries attend to BOS alone (its weight exactly 1: every other key underflows to an
exact 0), and every value at those positions is concrete, so what a layer adds there is a plain
sum of products. Where its inputs are exact and every product lies on one dyadic grid within 2^24
of its steps (`bounds.special_linear`'s test), every evaluation order computes it exactly; adding
it to a residual dimension that is exact too, the sum on one grid within 2^24 of its steps, is
exact as well. Without this, a head copying a one-hot default at BOS (a column of 1) left 3 units
of roundoff there, which a copy of that head at a real position (exact where every value it reads
is) then carried, and a step MLP whose thresholds rest on that copy's one-hot at weight 2^23 (the
integer band) multiplied into 13.5 against a margin of 9.33 (defs 2044031:
`aggregate(select_from_first(tokens, "1"), load_from_location(tokens_int, 0), 0.5) +
count(tokens, "0")` at N = 5, tests/compiler/test_exact_specials.py).
"""

from __future__ import annotations

import numpy as np

from compiler.bounds import special_linear
from compiler.grids import dyadic_exponent


def exact_products(
    z: np.ndarray, z_err: np.ndarray, w: np.ndarray, bias: np.ndarray, entries: int | None = None
) -> np.ndarray:
    """[S, C]: where `z @ w + bias` (concrete rows z [S, D] with errors z_err) is computed exactly
    in every evaluation order (`entries`: `special_linear`'s)."""
    _, err = special_linear(z, z_err, w, bias, entries)
    return err == 0


def exact_additions(
    x: np.ndarray, e: np.ndarray, out: np.ndarray, exact_out: np.ndarray
) -> np.ndarray:
    """[S, d_model]: where the residual x (error e) plus a sublayer's exact output `out` is exact:
    both exact, on one dyadic grid, their sum within 2^24 of its steps (so float32 holds it)."""
    grid = np.maximum(dyadic_exponent(x), dyadic_exponent(out))
    total = np.abs(x + out)
    within = (grid <= 60) & (np.ldexp(total, np.minimum(grid, 60)) < 2.0**24)
    return (e == 0) & exact_out & within
