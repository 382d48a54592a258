"""A two-valued map of two numbers that is a threshold of a line through both is stepped over that
line (`compiler.separating_lines`, tried by `compiler.linear_steps`)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_compile import all_inputs, check_inputs, random_inputs

from compiler import compile_sop
from compiler.separating_lines import _simplest, separating_coefficients
from rasp.errors import Source
from rasp.interpreter import load_source
from rasp.sops import SOp

VOCAB = ["a", "b", "c"]


def _grid(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Every (index, length) with index < length <= n."""
    pairs = [(i, m) for m in range(1, n + 1) for i in range(m)]
    return np.array([p[0] for p in pairs], float), np.array([p[1] for p in pairs], float)


def _separates(coef: tuple[float, float], x: np.ndarray, y: np.ndarray, ids: np.ndarray) -> bool:
    """Whether the outputs are a function of coef·(x, y) that changes once (a threshold)."""
    s = coef[0] * x + coef[1] * y
    order = np.argsort(s, kind="stable")
    changes = np.flatnonzero(np.diff(ids[order]))
    if len(changes) == 0:
        return True
    k = changes[0]
    return len(changes) == 1 and s[order][k] < s[order][k + 1]


def test_the_slope_of_a_ratio_threshold_is_found_exactly() -> None:
    x, y = _grid(40)
    ids = (x > 0.75 * y).astype(float)
    found = separating_coefficients(x, y, ids)
    assert found[0] == (1.0, -0.75)  # the simplest fraction in range: exact in float32
    assert all(_separates(c, x, y, ids) for c in found)


def test_no_line_separates_a_band_or_three_values() -> None:
    x, y = _grid(20)
    assert separating_coefficients(x, y, ((x > 2) & (x < y - 2)).astype(float)) == []
    assert separating_coefficients(x, y, np.minimum(x, 2.0)) == []  # three outputs
    assert separating_coefficients(x, y, np.zeros_like(x)) == []  # one output


@settings(max_examples=200, deadline=None)
@given(
    a=st.integers(-5, 5),
    b=st.integers(-5, 5),
    c=st.integers(-60, 60),
    n=st.integers(2, 24),
)
def test_every_threshold_of_a_line_is_separated(a: int, b: int, c: int, n: int) -> None:
    x, y = _grid(n)
    ids = (a * x + b * y > c / 2).astype(float)
    if len(np.unique(ids)) < 2:
        assert separating_coefficients(x, y, ids) == []
        return
    found = separating_coefficients(x, y, ids)
    assert found and all(_separates(coef, x, y, ids) for coef in found)


@given(low=st.fractions(-50, 50), width=st.fractions(1 / 1000, 10))
def test_the_simplest_fraction_lies_strictly_inside(low, width) -> None:  # type: ignore[no-untyped-def]
    high = low + width
    m = _simplest(float(low), float(high))
    assert float(low) < m < float(high)


def _load(text: str) -> SOp:
    sop = load_source(Source("<test>", text)).get("res")
    assert isinstance(sop, SOp)
    return sop


@pytest.mark.exactness
@pytest.mark.parametrize(
    "text", ["res = indices > 0.75 * length;", "res = indices / length > 0.75;"]
)
def test_the_last_quarter_is_one_step_of_a_line(text: str) -> None:
    # Stepped over the length's 1/(n+1) with the index one-hot as context: 43,841 parameters at
    # N = 128 (384,804 at 256). Over indices - 0.75·length, with the length decoded first: 8,348.
    sop = _load(text)
    model = compile_sop(sop, VOCAB, 128)
    assert model.param_count() < 10_000 and len(model.metadata["layers"]) == 2
    inputs = all_inputs(VOCAB, 4) + random_inputs(VOCAB, 128, 60, 128)
    inputs += [["a"] * n for n in (1, 3, 4, 5, 100, 127, 128)]
    assert check_inputs(model, sop, inputs) == len(inputs)


def test_below_128_positions_the_index_stays_a_context() -> None:
    # at N = 64 the line costs a layer for 3.1 times fewer parameters (4,380 against 13,751):
    # less than a layer's worth (compiler.model.LAYER_WORTH)
    model = compile_sop(_load("res = indices > 0.75 * length;"), VOCAB, 64)
    assert len(model.metadata["layers"]) == 1


def test_every_pair_in_a_small_grid_is_tried_in_both_groupings() -> None:
    # x > 2y: grouped by y the slope is 2; grouped by x, 1/2 (y < x / 2)
    x, y = (np.array(v, float) for v in zip(*itertools.product(range(12), range(12)), strict=True))
    ids = (x > 2 * y).astype(float)
    found = separating_coefficients(x, y, ids)
    assert len(found) == 2 and all(_separates(c, x, y, ids) for c in found)
