"""`compiler.blocks.sort_values`: its numpy path for ints and floats gives what the dict gives."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.blocks import _order, all_numbers, is_number, sort_values, value_key

NUMBERS = st.one_of(
    st.integers(-(2**60), 2**60),
    st.integers(-5, 5),
    st.floats(allow_nan=False, width=64),
    st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, float("inf"), float("-inf")]),
)
ATOMS = st.one_of(NUMBERS, st.booleans(), st.sampled_from(["a", "b"]), st.just(float("nan")))


def _by_dict(values: list[object]) -> tuple[object, ...]:
    unique = {value_key(v): v for v in values}
    return tuple(sorted(unique.values(), key=_order))


def _shown(values: tuple[object, ...]) -> list[tuple[str, str]]:
    return [(type(v).__name__, repr(v)) for v in values]  # -0.0 and 0.0, 1 and 1.0 apart


@settings(max_examples=400, deadline=None)
@given(st.lists(NUMBERS, max_size=40))
def test_numbers_sort_as_the_dict_sorts_them(values: list[object]) -> None:
    assert _shown(sort_values(values)) == _shown(_by_dict(values))


@settings(max_examples=200, deadline=None)
@given(st.lists(ATOMS, max_size=30))
def test_any_atoms_sort_as_the_dict_sorts_them(values: list[object]) -> None:
    assert _shown(sort_values(iter(values))) == _shown(_by_dict(values))


def test_the_last_of_two_zeros_is_kept() -> None:
    assert repr(sort_values([0.0, 1.0, -0.0])) == "(-0.0, 1.0)"
    assert repr(sort_values([-0.0, 2, 0.0, 2.0])) == "(0.0, 2.0, 2)"


def test_all_numbers_equals_the_loop() -> None:
    class Half(float):
        pass

    cases = [(), (1, 2.5), (1, True), (True,), ("a", 1), (Half(0.5), 2), (np.float64(1.5), 1)]
    for values in cases:
        for bools in (False, True):
            want = all(is_number(v) or (bools and isinstance(v, bool)) for v in values)
            assert all_numbers(values, bools=bools) == want
            assert all_numbers(iter(values), bools=bools) == want
