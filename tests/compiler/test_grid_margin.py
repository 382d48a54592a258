"""The certifier's grid margin (compiler.grid_margin): the sparse walk gives the dense pass's
margins bit for bit, on values on, near and off the grids."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import grid_margin as G
from compiler.certify import SNAP_NOISE, _grid_margin


def _values(seed: int, denominators: list[int]) -> np.ndarray:
    """Fractions k / d of the grids, their float64 neighbours, values a noise step off (inside
    and just outside the relative noise), others, 0, -0.0, tiny, huge and non-finite ones."""
    rng = np.random.default_rng(seed)
    d = rng.choice(denominators, 400)
    k = rng.integers(-3 * d, 3 * d + 1)
    exact = k / d
    ulps = np.nextafter(exact, np.inf), np.nextafter(exact, -np.inf)
    scale = rng.choice([0.5, 0.99, 1.0, 1.01, 2.0], 400) * SNAP_NOISE
    noisy = exact * (1 + scale * rng.choice([-1.0, 1.0], 400))
    other = rng.uniform(-3, 3, 400)
    special = [0.0, -0.0, 5e-324, -5e-324, 1e-300, 1e-12, 2.5, np.inf, -np.inf, np.nan]
    return np.concatenate([exact, *ulps, noisy, other, special])


@pytest.mark.parametrize("seed", range(6))
def test_the_sparse_walk_gives_the_dense_margins(seed: int) -> None:
    denominators = [1, 2, 3, 7, 10, 12, 60, 97, 256, 1000][: 4 + seed]
    x = _values(seed, denominators)
    grids = sorted(set(denominators))
    finite = np.isfinite(x)
    low, high = float(x[finite].min()), float(x[finite].max())
    sparse = G._sparse(x, grids, SNAP_NOISE, finite, low, high)
    dense = G._dense(x, grids, SNAP_NOISE)
    assert np.array_equal(sparse, dense)
    assert (dense > 0).any() and (dense == 0).any()  # values on some grid and on none


def test_the_sparse_walk_is_taken_for_many_grids_and_found_the_same(monkeypatch) -> None:
    """frac_prevs' output at N: k / (i + 1) at position i, one grid per position. The dense pass
    took 32 of the compile's 148 s at N = 1500; the sparse walk is chosen, and agrees."""
    n = 300
    x = np.array([k / (i + 1) for i in range(n) for k in range(i + 2)])
    x = np.concatenate([x, np.nextafter(x, 2.0), x * (1 + 2 * SNAP_NOISE)])
    denominators = list(range(1, n + 1))
    dense = G._dense(x, denominators, SNAP_NOISE)
    monkeypatch.setattr(G, "_dense", None)  # the dense pass is not run
    assert np.array_equal(_grid_margin(x, denominators), dense)


def test_a_value_set_of_wide_range_keeps_the_dense_pass(monkeypatch) -> None:
    x = np.array([0.5, 1e17, -3.25])
    monkeypatch.setattr(G, "_sparse", None)  # the sparse walk is not run
    margin = _grid_margin(x, [2, 4])
    assert margin[0] == 0.125 and margin[2] == 0.125


def _denominators_before(relation, max_len: int, axis) -> tuple[int, ...] | None:
    """compiler.grid.output_denominators as it was: every value's lcm, position by position."""
    import math

    from compiler.grid import MAX_DENOMINATOR, GridAxis, denominators_of

    cells = max_len * (max_len + 1) // 2 if axis is GridAxis.PAIR else max_len
    sets_at: list[dict[int, tuple]] = [{} for _ in range(cells)]
    distinct: dict[int, tuple] = {}
    for (i, n), values in relation.items():
        at = i if axis is GridAxis.POSITION else n - 1 if axis is GridAxis.LENGTH else n - 1 - i
        if axis is GridAxis.PAIR:
            at = n * (n - 1) // 2 + i  # (i, n): length 1's position, then length 2's two, ...
        sets_at[at][id(values)] = values
        distinct[id(values)] = values
    floats = {v for values in distinct.values() for v in values if isinstance(v, float)}
    if not floats:
        return None
    found = denominators_of(np.array(sorted(floats), dtype=np.float64))
    if (found == 0).any():
        return None
    denominator_of = dict(zip(sorted(floats), found.tolist(), strict=True))
    out = []
    for sets in sets_at:
        d, has_float = 1, False
        for values in sets.values():
            for v in values:
                if isinstance(v, float):
                    d = math.lcm(d, denominator_of[v])
                    has_float = True
        if d == 1 and has_float:
            d = 2
        if d > MAX_DENOMINATOR:
            return None
        out.append(d)
    return tuple(out) if any(d > 1 for d in out) else None


@pytest.mark.parametrize("seed", range(8))
def test_the_denominators_are_those_of_every_value(seed: int) -> None:
    """Each distinct set's lcm is taken once, and a position past MAX_DENOMINATOR ends the walk
    at once: the same denominators (or None) as the value-by-value lcm."""
    from compiler.grid import GridAxis, output_denominators

    rng = np.random.default_rng(seed)
    n = 12
    pool = [
        tuple(float(k) / d for k in rng.integers(0, d + 1, 3)) + (1, 2.0)
        for d in rng.integers(1, [3, 12, 60, 10**5][seed % 4], 10)
    ]
    pool.append((1, 2))  # ints only
    relation = {
        (i, m): pool[int(rng.integers(len(pool)))] for m in range(1, n + 1) for i in range(m)
    }
    for axis in GridAxis:
        assert output_denominators(relation, n, axis) == _denominators_before(relation, n, axis)


# ---- adversarial values, against an exact reading of the window argument ------------------------


def _on(x: float, d: int) -> bool:
    """The dense pass's test for one value, in Python floats (the same IEEE operations)."""
    s = x * d
    return math.isfinite(s) and abs(s - round(s)) <= SNAP_NOISE * abs(s)


@st.composite
def _adversarial(draw: st.DrawFn) -> tuple[np.ndarray, list[int]]:
    """Values k / d for k up to 2^40 and d up to 5M, a float64 step off, at 0.9-1.1x the noise,
    halfway between grid points, subnormal, non-finite, any float, and duplicated."""
    grids = draw(
        st.lists(
            st.one_of(st.integers(1, 12), st.integers(1, 3000), st.integers(1, 5_000_000)),
            min_size=1,
            max_size=5,
        )
    )

    @st.composite
    def value(draw: st.DrawFn) -> float:
        d = draw(st.sampled_from(grids))
        big = draw(st.sampled_from([10, 1000, 10**6, 2**40]))
        k = draw(st.integers(-big, big))
        kind = draw(st.integers(0, 6))
        if kind == 0:
            return k / d
        if kind == 1:
            return float(np.nextafter(k / d, draw(st.sampled_from([np.inf, -np.inf]))))
        if kind == 2:
            scale = draw(st.floats(0.9, 1.1)) * SNAP_NOISE * draw(st.sampled_from([1, -1]))
            return k / d * (1 + scale)
        if kind == 3:
            return (k + 0.5) / d
        if kind == 4:
            specials = [0.0, -0.0, 5e-324, -5e-324, 2.2e-308, 1e-300, np.inf, -np.inf, np.nan]
            return draw(st.sampled_from(specials))
        if kind == 5:
            return (k + k * SNAP_NOISE) / d  # at the relative noise itself
        return draw(st.floats(allow_nan=True, allow_infinity=True))

    xs = draw(st.lists(value(), min_size=1, max_size=40))
    return np.array(xs + xs[: draw(st.integers(0, 3))], dtype=np.float64), sorted(set(grids))


@settings(max_examples=300, deadline=None)
@given(_adversarial())
def test_the_sparse_walk_agrees_on_adversarial_values(case: tuple[np.ndarray, list[int]]) -> None:
    """Bit for bit with the dense pass, and every (value, grid) pair the dense pass finds on the
    grid lies inside the sparse walk's window around its k / d, checked in exact rationals."""
    x, grids = case
    # (no np.errstate: inf, nan and products past float64's range raise no RuntimeWarning)
    dense = G._dense(x, grids, SNAP_NOISE)
    assert np.array_equal(G.grid_margin(x, grids, SNAP_NOISE), dense)
    finite = np.isfinite(x)
    if finite.any():
        low, high = float(x[finite].min()), float(x[finite].max())
        small = max(abs(low), abs(high)) * grids[-1] < G.MAX_K
        # (only where small: 6e307 * 3 is inf, whose ceil raises)
        windows = small and sum(math.ceil(high * d) - math.floor(low * d) + 3 for d in grids)
        if small and windows < 10**6:  # (the walk's own guard is by cost; forced here)
            sparse = G._sparse(x, grids, SNAP_NOISE, finite, low, high)
            assert np.array_equal(sparse, dense)
    for value in x.tolist():
        for d in grids:
            if _on(value, d):
                k = round(value * d)
                slack = Fraction(G.WINDOW) * abs(k) / d + Fraction(G.TINY)
                assert abs(Fraction(value) - Fraction(k, d)) <= slack, (value, d)


def test_the_adversarial_check_takes_values_near_the_float_limit() -> None:
    """6e307 on a grid of 3: 1.8e308 overflowed the test's own window count (hypothesis found it)."""
    test_the_sparse_walk_agrees_on_adversarial_values.hypothesis.inner_test(  # type: ignore[attr-defined]
        (np.array([6e307]), [1, 3])
    )


def test_a_noise_past_max_noise_takes_the_dense_pass() -> None:
    """The windows hold every value on a grid only up to MAX_NOISE: at 4e-9, x = 10^6 / 3 moved
    by 3e-9 of itself is on grid 3, outside the window (2.5e-9 of k / d); the sparse walk, which
    50 copies of it would otherwise take, misses it there."""
    noise = 4 * G.MAX_NOISE
    x = np.full(50, 10**6 / 3 * (1 + 3e-9))
    grids = [2, 3]
    dense = G._dense(x, grids, noise)
    assert (dense > 0).all()  # on grid 3
    sparse = G._sparse(x, grids, noise, np.isfinite(x), float(x[0]), float(x[0]))
    assert (sparse == 0.0).all()  # the window misses it
    assert np.array_equal(G.grid_margin(x, grids, noise), dense)
    assert np.array_equal(G.grid_margin(x, grids, G.MAX_NOISE), G._dense(x, grids, G.MAX_NOISE))


def test_values_on_no_grid_are_not_computed_with() -> None:
    """inf, nan and a finite x whose x * d overflows are on no grid (margin 0), found without
    computing inf - inf (a RuntimeWarning under the hypothesis test's values before)."""
    x = np.array([np.inf, -np.inf, np.nan, 1.7e308, -1.7e308, 0.5, 2.0])
    # (caught here, not by a filterwarnings mark: the tier runs with `-p no:warnings`)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        margin = G._dense(x, [2, 3], SNAP_NOISE)  # 1.7e308 * 2 is past the range
    assert (margin[:5] == 0.0).all()
    assert margin[5] == 0.25 and margin[6] == 1 / 6
