"""The certifier's fast paths against references: `Linear.own`'s exact-sum test (dense where most
inputs are exact, gathered elsewhere) against exact rationals, `Linear.at`'s first categorical
table (its base folded in) against the sum it replaces, the shared error of an MLP whose units are
all alone against `Groups.shared_error`, `mlp.dyadic` against every entry's test, and an MLP's
W_out kept as its entries (`OutRows`) against the dense array. Each must
give the same floats: a fast path that zeroed one more rounding would prove something false."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from compiler import out_rows
from compiler.bounds import DimErrors, Evaluated, Linear, gamma, overflowed
from compiler.certify_mlp import _shared_error
from compiler.certify_parts import Groups
from compiler.mlp import dyadic
from compiler.out_rows import OutRows
from compiler.reach import Reading
from compiler.sparse_sums import SparseRows, Spread

_SPECIAL = [0.0, -0.0, math.nan, math.inf, -1.0, 5e-324, 2.0**-1022, 2.0**1023, 2.0**24]
_SPECIAL += [
    2.0**24 - 1,
    2.0**84,
    2.0**-36,
    math.nextafter(2.0**-36, 0),
    math.nextafter(2.0**84, 0),
]


def _exact(m: float, steps: int) -> bool:
    """m·2^steps < 2^24 in exact arithmetic (NaN: never)."""
    if math.isnan(m) or steps > 60:
        return False
    if math.isinf(m):
        return m < 0
    return Fraction(m) * Fraction(2) ** steps < 2**24


def _bare_linear(terms: np.ndarray, w_grid: np.ndarray) -> Linear:
    lin = Linear.__new__(Linear)  # `own` reads only these two
    lin.terms, lin.w_grid = terms, w_grid
    return lin


magnitudes = st.one_of(
    st.sampled_from(_SPECIAL),
    st.builds(lambda m, e: m * 2.0**e, st.floats(0, 1), st.integers(-100, 100)),
)


@settings(max_examples=400, deadline=None)
@given(
    shape=st.tuples(st.integers(0, 5), st.integers(0, 5)),
    data=st.data(),
    scalar_grid=st.booleans(),
)
def test_own_zeroes_exactly_the_exact_sums(shape, data, scalar_grid) -> None:  # noqa: ANN001
    P, C = shape
    m = data.draw(hnp.arrays(np.float64, (P, C), elements=magnitudes))
    exact_in = data.draw(hnp.arrays(np.bool_, (P, C)))  # mostly exact: the dense test
    err = np.where(exact_in, 0.0, 1e-9)
    grids = st.sampled_from([0, 1, 3, 24, 59, 60, 61, 99])
    grid = (
        data.draw(grids) if scalar_grid else data.draw(hnp.arrays(np.int64, (P, C), elements=grids))
    )
    w_grid = data.draw(
        hnp.arrays(np.int64, (C,), elements=st.sampled_from([-60, -8, 0, 1, 36, 60, 99]))
    )
    terms = np.arange(1, C + 1)
    with np.errstate(over="ignore"):
        linear = _bare_linear(terms, w_grid)
        got = linear._own(Evaluated(m, err, m, grid))  # before `own`'s overflow rule
        overflow = linear.own(Evaluated(m, err, m, grid))
    assert np.array_equal(overflow, overflowed(got, m + err), equal_nan=True)
    full = np.broadcast_to(np.asarray(grid), (P, C))
    for p in range(P):
        for c in range(C):
            zero = err[p, c] == 0 and _exact(float(m[p, c]), int(full[p, c] + w_grid[c]))
            want = 0.0 if zero else gamma(terms[c]) * m[p, c]
            assert np.array_equal(got[p, c], want, equal_nan=True), (p, c, m[p, c], got[p, c])


def test_own_on_random_mixes_of_exact_and_inexact_inputs() -> None:
    """Both of `own`'s paths (few exact inputs: gathered; most: dense), near every bound."""
    rng = np.random.default_rng(11)
    pool = np.array(_SPECIAL)
    for _ in range(3000):
        P, C = (int(x) for x in rng.integers(1, 6, 2))
        m = np.where(
            rng.random((P, C)) < 0.5, rng.choice(pool, (P, C)), 2.0 ** rng.integers(-40, 90, (P, C))
        )
        err = np.where(rng.random((P, C)) < rng.random(), 0.0, 1e-9)
        grid = rng.choice([0, 1, 23, 24, 59, 60, 61, 99], (P, C))
        w_grid = rng.choice([-60, -37, 0, 1, 24, 59, 60, 61, 99], C)
        terms = rng.integers(1, 9, C)
        with np.errstate(over="ignore"):
            got = _bare_linear(terms, w_grid)._own(Evaluated(m, err, m, grid))
        for p in range(P):
            for c in range(C):
                zero = err[p, c] == 0 and _exact(float(m[p, c]), int(grid[p, c] + w_grid[c]))
                want = 0.0 if zero else gamma(terms[c]) * m[p, c]
                assert np.array_equal(got[p, c], want, equal_nan=True), (m[p, c], grid[p, c])


def _linear(rng: np.random.Generator) -> tuple[Linear, list[int], np.ndarray]:
    """A map reading a categorical one-hot first, then a number, then another one-hot."""
    size, other = int(rng.integers(1, 5)), int(rng.integers(1, 4))
    cat = Reading("c", True, tuple(((3 + i, 1.0),) for i in range(size)), (), ())
    num = Reading("n", False, (((3 + size, 2.0), (0, 1.0)),), (0.0, 1.5, -3.0), ())
    dims = range(4 + size, 4 + size + other)
    cat2 = Reading("d", True, tuple(((d, 1.0),) for d in dims), (), ())
    D, C = 4 + size + other, int(rng.integers(1, 5))
    W = rng.integers(-4, 5, (D, C)) * 2.0 ** rng.integers(-30, 30, (D, C))
    W[1:3] = 0.0
    errors = DimErrors(
        np.where(rng.random(D) < 0.3, 2.0**-20, 0.0),
        np.zeros(D),
        np.abs(rng.standard_normal(D)),
        np.zeros(D, dtype=np.int64),
    )
    lin = Linear(W, rng.standard_normal(C), [cat, num, cat2], [0, 1, 2], errors, (0, 1, 2))
    P = int(rng.integers(0, 12))
    coords = np.stack(
        [rng.integers(0, size, P), rng.choice(num.numbers, P), rng.integers(0, other, P)], axis=1
    ).astype(np.float64)
    return lin, [0, 1, 2], coords


def test_at_starts_from_the_first_categorical_table_plus_its_base() -> None:
    rng = np.random.default_rng(7)
    for _ in range(300):
        lin, ids, coords = _linear(rng)
        first = lin._categorical(lin.readings[0], coords[:, 0].astype(np.int64))
        rest = [
            lin._numerical(lin.readings[1], coords[:, 1]),
            lin._categorical(lin.readings[2], coords[:, 2].astype(np.int64)),
        ]
        value = first.value + (lin.W[lin.one] + lin.bias)
        error = first.error + 0.0
        size = first.magnitude + (np.abs(lin.W[lin.one]) + np.abs(lin.bias))
        for part in rest:
            value, error, size = value + part.value, error + part.error, size + part.magnitude
        for _ in range(2):  # the second from the remembered table, which the first left intact
            ev = lin.at(ids, coords)
            for got, want in ((ev.value, value), (ev.error, error), (ev.magnitude, size)):
                assert got.shape == want.shape and np.array_equal(got, want)
            grid = np.broadcast_to(np.asarray(ev.grid), ev.value.shape)
            assert np.array_equal(grid, rest[0].grid)


def test_the_shared_error_of_units_alone_is_groups_shared_error() -> None:
    rng = np.random.default_rng(3)
    for _ in range(500):
        H, n_out, P = (int(x) for x in rng.integers(0, 7, 3))
        n_out += 1
        wo = rng.integers(-3, 4, (H, n_out)) * 2.0 ** rng.integers(-20, 20, (H, n_out))
        wo[rng.random((H, n_out)) < 0.5] = 0.0
        w_in = rng.standard_normal((4, H)) if rng.random() < 0.7 else np.ones((4, H))
        groups: dict[bytes, list[int]] = {}
        for j in range(H):
            groups.setdefault(np.ascontiguousarray(w_in[:, j]).tobytes(), []).append(j)
        shape = Groups(groups, wo)
        positive = rng.standard_normal((P, H)) > 0
        shared = np.abs(rng.standard_normal((P, H))) * 2.0 ** rng.integers(-1070, 10, (P, H))
        shared[rng.random((P, H)) < 0.4] = 0.0
        on = np.nonzero(positive)
        spread = Spread(on, SparseRows(wo), P)
        got = _shared_error(shape, positive, shared, spread, on, SparseRows(np.abs(wo)))
        want = shape.shared_error(positive.astype(np.float64), shared)
        assert got.shape == want.shape and np.array_equal(got.view(np.int64), want.view(np.int64))


@settings(max_examples=300, deadline=None)
@given(
    w=hnp.arrays(
        st.sampled_from([np.float64, np.float32]),
        hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=4),
        elements=st.one_of(
            st.sampled_from([0.0, -0.0, math.nan, math.inf, 2.0**-17, 2.0**-16, 3.0]),
            st.builds(lambda m, e: m * 2.0**e, st.integers(-9, 9), st.integers(-20, 4)),
        ),
    )
)
def test_dyadic_tests_every_entry(w: np.ndarray) -> None:
    class Spec:
        out_rows: np.ndarray | OutRows = w

    scaled = np.asarray(w, dtype=np.float64) * 2.0**16
    with np.errstate(over="ignore", invalid="ignore"):
        want = bool(np.array_equal(scaled, np.round(scaled)))
        assert dyadic(Spec) == want  # type: ignore[arg-type]
        if w.ndim == 2:  # the builder's form: its entries
            Spec.out_rows = OutRows.of(list(w), w.shape[1])
            assert dyadic(Spec) == want  # type: ignore[arg-type]


_ENTRIES = [0.0, -0.0, math.nan, math.inf, -math.inf, 1.0, -1.0, 2.0**-17, 5e-324]


@settings(max_examples=400, deadline=None)
@given(
    w=hnp.arrays(
        np.float64,
        st.tuples(st.integers(0, 5), st.integers(0, 6)),
        elements=st.sampled_from(_ENTRIES),
    ),
    negated=st.lists(st.booleans(), min_size=5, max_size=5),
    block=st.sampled_from([1, 5, 7, 1 << 20]),
)
def test_out_rows_give_back_the_dense_w_out_bit_for_bit(
    w: np.ndarray, negated: list, block: int
) -> None:
    """`OutRows` (the builder's W_out, kept as entries) against `np.array(rows)`, the dense array
    it replaces: the same bits (NaN, infinities, -0.0 in rows written as `-delta` or mixed), and
    the non-zero entries in `W[W != 0]`'s order; rows stacked a block at a time, blocks of one
    row, of rows that straddle a block, and all rows in one."""
    rows = [-row if neg else row for row, neg in zip(w, negated)]  # -0.0 rows, as -delta writes
    want = np.array(rows).reshape(len(rows), w.shape[1])
    original = out_rows._BLOCK
    out_rows._BLOCK = block
    try:
        out = OutRows.of(rows, w.shape[1])
    finally:
        out_rows._BLOCK = original
    got = out.dense()
    assert got.shape == want.shape and got.dtype == want.dtype
    assert np.array_equal(got.view(np.int64), want.view(np.int64))
    nonzero = want[want != 0]
    assert np.array_equal(out.nonzero().view(np.int64), nonzero.view(np.int64))
    with pytest.raises(ValueError, match="a row of"):
        OutRows.of([np.zeros(w.shape[1] + 1)], w.shape[1])
