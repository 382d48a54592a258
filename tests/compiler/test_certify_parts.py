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
