"""compiler.certify_scores: the attention score bounds computed with fewer products where no side
carries an error are the very floats of the bound's formula (a certificate, and so a model's hash,
must not change with the shortcut)."""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest

from compiler.certify_scores import KeySide, score_bounds, score_bounds_general


def _side(rng: np.random.Generator, rows: int, d: int, kind: str) -> np.ndarray:
    """Mostly zeros (one-hot readings), small whole numbers, dyadic and other fractions."""
    values = rng.integers(-4, 5, (rows, d)).astype(np.float64)
    if kind == "fractions":
        values = values / rng.choice([1.0, 2.0, 3.0, 256.0, 1e3], (rows, d))
    elif kind == "large":
        values = values * 2.0**20
    values[rng.random((rows, d)) < 0.6] = 0.0
    values[rng.random((rows, d)) < 0.05] = -0.0
    return values


def _errors(rng: np.random.Generator, shape: tuple[int, int], kind: str) -> np.ndarray:
    if kind == "none":
        return np.zeros(shape)
    if kind == "negative zeros":
        return np.where(rng.random(shape) < 0.5, -0.0, 0.0)
    return np.where(rng.random(shape) < 0.3, rng.random(shape) * 1e-6, 0.0)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal floats, bit for bit (NaN as NaN, -0.0 apart from 0.0)."""
    return a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("d_head", [1, 4, 16, 64, 3])  # 3: sqrt(d_head) not a power of 2
@pytest.mark.parametrize("kind", ["whole", "fractions", "large"])
@pytest.mark.parametrize("q_err", ["none", "negative zeros", "some"])
@pytest.mark.parametrize("k_err", ["none", "negative zeros", "some"])
def test_shortcut_gives_the_formulas_floats(d_head: int, kind: str, q_err: str, k_err: str) -> None:
    rng = np.random.default_rng(zlib.crc32(f"{d_head} {kind} {q_err} {k_err}".encode()))
    scale = math.sqrt(d_head)
    scale_exact = d_head & (d_head - 1) == 0 and d_head.bit_length() % 2 == 1
    for _ in range(5):
        q = _side(rng, int(rng.integers(1, 40)), d_head, kind)
        k = _side(rng, int(rng.integers(1, 40)), d_head, kind)
        qe, ke = _errors(rng, q.shape, q_err), _errors(rng, k.shape, k_err)
        got = score_bounds(q, qe, KeySide(k, ke), scale, scale_exact)
        want = score_bounds_general(q, qe, k, ke, scale, scale_exact)
        assert _same(got[0], want[0]) and _same(got[1], want[1])


@pytest.mark.parametrize("bad", [math.inf, -math.inf, math.nan])
def test_a_value_that_is_not_finite_takes_the_formula(bad: float) -> None:
    """inf times a zero error is NaN in the formula: the shortcut must not hide it."""
    rng = np.random.default_rng(1)
    q, k = _side(rng, 6, 4, "whole"), _side(rng, 5, 4, "whole")
    for query_side in (True, False):
        q2, k2 = q.copy(), k.copy()
        (q2 if query_side else k2)[2, 1] = bad
        qe, ke = np.zeros_like(q2), np.zeros_like(k2)
        with np.errstate(invalid="ignore", over="ignore"):
            got = score_bounds(q2, qe, KeySide(k2, ke), 2.0, True)
            want = score_bounds_general(q2, qe, k2, ke, 2.0, True)
        assert _same(got[0], want[0]) and _same(got[1], want[1])
