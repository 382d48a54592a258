"""`compiler.sparse_sums.concrete_products`: a mostly-zero matrix's products from its non-zeros are
the dense products' numbers where the sums are exact (whole-number data: to the bit) and within
float64's rounding of them elsewhere; a denser matrix takes the dense products themselves."""

from __future__ import annotations

import numpy as np

from compiler.sparse_sums import SPARSE_BELOW, concrete_products


def _sparse(rng: np.random.Generator, shape: tuple[int, int], nnz: int) -> np.ndarray:
    w = np.zeros(shape)
    flat = rng.choice(w.size, size=nnz, replace=False)
    w.flat[flat] = rng.integers(-8, 9, size=nnz) * 0.25
    return w


def _dense(x: np.ndarray, e: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, ...]:
    return x @ w, (np.abs(x) + e) @ np.abs(w), e @ np.abs(w)


def test_whole_number_data_gives_the_dense_products_to_the_bit() -> None:
    rng = np.random.default_rng(3)
    w = _sparse(rng, (300, 200), 400)
    assert np.count_nonzero(w) < SPARSE_BELOW * w.size
    x = rng.integers(-3, 4, size=(5, 300)).astype(np.float64)
    e = rng.integers(0, 2, size=(5, 300)) * 2.0**-20
    for got, want in zip(concrete_products(x, e, w), _dense(x, e, w), strict=True):
        assert got.shape == want.shape and np.array_equal(got, want)
    one = concrete_products(x[0], e[0], w)  # one state: [C] arrays
    for got, want in zip(one, _dense(x[0], e[0], w), strict=True):
        assert got.shape == want.shape and np.array_equal(got, want)


def test_other_data_is_within_float64_rounding_and_dense_matrices_are_blas() -> None:
    rng = np.random.default_rng(4)
    w = _sparse(rng, (300, 200), 400) * np.pi
    x, e = rng.normal(size=(4, 300)), np.abs(rng.normal(size=(4, 300))) * 1e-7
    for got, want in zip(concrete_products(x, e, w), _dense(x, e, w), strict=True):
        assert np.allclose(got, want, rtol=1e-13, atol=1e-13)
    dense = rng.normal(size=(30, 20))
    for got, want in zip(
        concrete_products(x[:, :30], e[:, :30], dense),
        _dense(x[:, :30], e[:, :30], dense),
        strict=True,
    ):
        assert np.array_equal(got, want)


def test_an_all_zero_matrix_gives_float_zeros() -> None:
    got = concrete_products(np.ones((2, 3)), np.zeros((2, 3)), np.zeros((3, 4)))
    for a in got:
        assert a.dtype == np.float64 and a.shape == (2, 4) and not a.any()
