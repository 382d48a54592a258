"""The certifier's enumeration of reading states: every combination, in itertools.product's order,
however many readings a head reads."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.certify_parts import product


@dataclass(frozen=True)
class _Reading:
    numbers: tuple[float, ...]
    categorical: bool = False
    vector: bool = False

    @property
    def size(self) -> int:
        return len(self.numbers)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.floats(-8, 8), min_size=0, max_size=4), min_size=1, max_size=5))
def test_every_combination_in_product_order(axes: list[list[float]]) -> None:
    readings = tuple(_Reading(tuple(a)) for a in axes)
    got = product(readings, tuple(range(len(axes))))
    want = np.array(list(itertools.product(*axes)), dtype=np.float64).reshape(-1, len(axes))
    assert np.array_equal(got, want)


def test_more_readings_than_numpy_has_axes() -> None:
    # 96 readings (np.meshgrid stops at 64), most of one value
    readings = tuple(_Reading((1.0,)) for _ in range(94)) + (_Reading((2.0, 3.0)),) * 2
    got = product(readings, tuple(range(96)))
    assert got.shape == (4, 96)
    assert got[:, 94:].tolist() == [[2.0, 2.0], [2.0, 3.0], [3.0, 2.0], [3.0, 3.0]]
    # a categorical reading's coordinates are its values' indices
    cat = _Reading(("a", "b", "c"), categorical=True)  # type: ignore[arg-type]
    assert product((cat,), (0,)).ravel().tolist() == [0.0, 1.0, 2.0]


def _dense_shared_error(groups: dict[bytes, list[int]], wo: np.ndarray, act, shared) -> np.ndarray:
    """The definition: per group of identical input weights, |sum of its active members' W_out|
    times its shared error (pairs of opposite rows: the error of one when exactly one is on)."""
    out = np.zeros((act.shape[0], wo.shape[1]))
    for g in groups.values():
        if len(g) == 2 and np.array_equal(wo[g[0]], -wo[g[1]]):
            one_on = np.abs(act[:, g[0]] - act[:, g[1]]) * shared[:, g[0]]
            out += one_on[:, None] * np.abs(wo[g[0]])[None, :]
        else:
            out += np.abs(act[:, g] @ wo[g]) * shared[:, g[0]][:, None]
    return out


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_the_shared_error_is_its_definition_over_sparse_output_rows(seed: int) -> None:
    """Groups reads only the output columns a group writes (a one-hot output of thousands of
    columns, a few per unit): the same sums as over every column."""
    from compiler.certify_parts import Groups

    rng = np.random.default_rng(seed)
    hidden, outputs, points = 12, 30, 5
    wo = np.where(rng.random((hidden, outputs)) < 0.1, rng.integers(-3, 4, (hidden, outputs)), 0)
    wo = wo.astype(np.float64)
    wo[1] = -wo[0]  # a step's pair
    labels = rng.integers(0, 5, hidden)
    labels[0], labels[1] = 9, 9
    groups: dict[bytes, list[int]] = {}
    for j, label in enumerate(labels):
        groups.setdefault(bytes([label]), []).append(j)
    act = rng.random((points, hidden)) * (rng.random((points, hidden)) < 0.6)
    shared = np.empty((points, hidden))
    for g in groups.values():  # one error per group and point
        shared[:, g] = rng.random((points, 1))
    got = Groups(groups, wo).shared_error(act, shared)
    assert np.allclose(got, _dense_shared_error(groups, wo, act, shared), rtol=1e-12, atol=0)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_idle_groups_are_skipped_with_the_same_floats(seed: int) -> None:
    """A group with no unit on in a chunk adds nothing, so add_others skips it: every float is the
    one the loop over all groups gives, bit for bit, and an infinite error of an idle group is NaN
    as before (0 times inf)."""
    from compiler.certify_parts import Groups

    rng = np.random.default_rng(seed)
    hidden, outputs, points = 24, 16, 3
    wo = np.where(rng.random((hidden, outputs)) < 0.4, rng.standard_normal((hidden, outputs)), 0)
    groups: dict[bytes, list[int]] = {}
    for j, label in enumerate(rng.integers(0, 10, hidden)):
        groups.setdefault(bytes([label]), []).append(j)
    act = (rng.random((points, hidden)) < 0.05) * 1.0  # most groups idle
    shared = np.repeat(rng.random((points, 1)) * 3, hidden, axis=1)
    if rng.random() < 0.5:  # (its group idle or not)
        shared[:, list(groups.values())[rng.integers(0, len(groups))][0]] = np.inf
    built = Groups(groups, wo)
    base = rng.random((points, outputs))
    got, want = base.copy(), base.copy()
    built.add_others(got, act, shared)
    for members, cols, w in zip(built.other, built.other_cols, built.other_wo, strict=True):
        want[:, cols] += np.abs(act[:, members] @ w) * shared[:, members[0]][:, None]
    assert np.array_equal(got, want, equal_nan=True)


@dataclass(frozen=True)
class _Terms:
    terms: tuple[tuple[tuple[int, float], ...], ...]
    categorical: bool = True
    vector: bool = False


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_encode_writes_the_values_present_as_a_pass_per_value_did(seed: int) -> None:
    """encode visits only the values its points hold: the same rows as a pass over every value
    (a dimension set twice keeps its last number; a value past the reading's writes nothing)."""
    from compiler.certify_parts import encode

    rng = np.random.default_rng(seed)
    dims = np.array([3, 5, 8, 9])
    terms = tuple(
        tuple(
            (int(rng.choice(dims)), float(rng.integers(-3, 4))) for _ in range(rng.integers(0, 3))
        )
        for _ in range(rng.integers(1, 7))
    )
    reading = _Terms(terms)
    outputs = rng.integers(0, len(terms) + 2, rng.integers(0, 9)).astype(np.float64)
    want = np.zeros((len(outputs), len(dims)))
    column = {int(d): i for i, d in enumerate(dims)}
    for v, value_terms in enumerate(terms):
        for d, c in value_terms:
            want[outputs == v, column[d]] = c
    assert np.array_equal(encode(reading, outputs, dims), want)  # type: ignore[arg-type]
