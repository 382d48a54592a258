"""compiler.vector_maps computes an operator's map on columns exactly as Python does per value:
the same value, the same type, no value where Python raises; and declines what it cannot."""

from __future__ import annotations

import math
import operator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import vector_maps as vm
from compiler.map_values import apply_map
from rasp import arithmetic, lookups
from rasp import operators as ops

BINARY = [
    arithmetic.plus,
    operator.sub,
    arithmetic.times,
    operator.truediv,
    operator.mod,
    operator.eq,
    operator.ne,
    operator.lt,
    operator.le,
    operator.gt,
    operator.ge,
    ops._both,
    ops._either,
    lookups._equal_indicator,
]
UNARY = [operator.neg, operator.pos, round, ops._not, ops._indicator, lookups._positive]

# the values that matter: whole floats, halves (round), zeros of both types, float64 noise,
# the edge of float64's exact ints, and anything hypothesis finds
SPECIAL = [0, 0.0, 1, 1.0, -1, True, False, 0.5, -0.5, 2.5, -2.5, 1 / 3, 0.1, 0.2, 0.3, 7, -7, 3.0]
NUMBERS = st.one_of(
    st.sampled_from(SPECIAL),
    st.integers(-(2**20), 2**20),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([2**53 - 1, -(2**53) + 1, 2**53, 2**60, 1e308, -1e308]),
)
# tokens: equal by their text, never equal to a number; most operators decline them
ATOMS = st.one_of(NUMBERS, st.sampled_from(["a", "b", "", "1", "ab"]))
ROWS = st.lists(ATOMS, min_size=1, max_size=30)


def _key(value: object) -> object:
    """Type and exact value (a float by its bits, so -0.0 and 0.0 differ)."""
    return (type(value), value.hex() if isinstance(value, float) else value)


def _check(fn: ops.Lifted, columns: list[list]) -> bool:
    """True where the columns path answered (and agreed with Python on every row)."""
    cols = [vm.column(c) for c in columns]
    if any(c is None for c in cols):
        return False
    got = vm.apply_columns(fn, cols)  # type: ignore[arg-type]
    if got is None:
        return False
    values = vm.atoms(got)
    if values is None:
        return False
    for row, value in zip(zip(*columns, strict=True), values, strict=True):
        ok, want = apply_map(fn, list(row))
        if not ok:
            assert value is None, (fn.fn, row, value)
        else:
            assert value is not None and _key(value) == _key(want), (fn.fn, row, value, want)
    return True


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(BINARY), ROWS, st.data())
def test_binary_operators_agree_with_python(fn, left, data) -> None:
    right = data.draw(st.lists(ATOMS, min_size=len(left), max_size=len(left)))
    _check(ops.Lifted(fn, (None, None), (0, 1)), [left, right])


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(BINARY), ROWS, ATOMS, st.booleans())
def test_binary_operators_with_a_constant_agree_with_python(fn, values, constant, first) -> None:
    template = (constant, None) if first else (None, constant)
    _check(ops.Lifted(fn, template, (1,) if first else (0,)), [values])


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(UNARY), ROWS)
def test_unary_operators_agree_with_python(fn, values) -> None:
    _check(ops.Lifted(fn, (None,), (0,)), [values])


@settings(max_examples=200, deadline=None)
@given(ROWS, st.data())
def test_if_agrees_with_python(cond, data) -> None:
    then = data.draw(st.lists(ATOMS, min_size=len(cond), max_size=len(cond)))
    orelse = data.draw(ATOMS)
    _check(ops.Lifted(ops._choose, (None, None, orelse), (0, 1)), [cond, then])


def test_the_columns_answer_for_the_maps_that_matter() -> None:
    # a difference of two means, and a comparison, over fractions and ints together
    fractions = [k / 7 for k in range(8)] + [0, 1]
    assert _check(ops.Lifted(operator.sub, (None, None), (0, 1)), [fractions, fractions[::-1]])
    assert _check(ops.Lifted(operator.lt, (None, 0), (0,)), [fractions])
    assert _check(ops.Lifted(round, (None,), (0,)), [[0.5, 1.5, 2.5, -0.5, -1.5, 2, True]])
    # Python's remainder and division by zero: no value
    assert _check(
        ops.Lifted(operator.mod, (None, None), (0, 1)), [[-7, 7, -7.5, 7.5, 3], [2, -2, 2, -2, 0]]
    )
    assert _check(
        ops.Lifted(operator.truediv, (None, None), (0, 1)), [[1, 1.0, 0, 3], [0, 0.0, 2, 7]]
    )
    # tokens: `tokens == "a"` and a branch of `if`, with numbers beside them
    tokens = ["a", "b", "c", "a", 1, 0]
    assert _check(ops.Lifted(operator.eq, (None, "a"), (0,)), [tokens])
    assert _check(ops.Lifted(operator.ne, (None, 1), (0,)), [tokens])
    assert _check(ops.Lifted(ops._choose, (None, None, "x"), (0, 1)), [[1, 0, 1, 0, 2, 0], tokens])


@pytest.mark.parametrize(
    "fn, columns",
    [
        (ops.Lifted(operator.sub, (None, "a"), (0,)), [[1, 2]]),  # a string in arithmetic
        (ops.Lifted(operator.lt, (None, None), (0, 1)), [["a"], ["b"]]),  # strings ordered
        (ops.Lifted(operator.add, (None, None), (0, 1)), [[1], [2]]),  # not an operator's map
        (ops.Lifted(arithmetic.power, (None, 2), (0,)), [[3]]),  # ^: not computed here
    ],
)
def test_what_it_does_not_compute_is_declined(fn, columns) -> None:
    cols = [vm.column(c) for c in columns]
    assert vm.apply_columns(fn, cols) is None  # type: ignore[arg-type]


def test_columns_refuse_big_ints_and_non_finite_numbers_and_other_objects() -> None:
    assert vm.column([None]) is None
    assert vm.column([(1, 2)]) is None
    assert vm.column([2**53]) is None
    assert vm.column([math.inf]) is None
    assert vm.column([math.nan]) is None
    assert vm.column([2**53 - 1, 0.5, True]) is not None


def test_results_python_would_key_apart_are_declined() -> None:
    # 0 * -1.5 is -0.0 (a key equal to 0.0's), an int product past 2^53 is not exact in float64
    times = ops.Lifted(arithmetic.times, (None, None), (0, 1))
    got = vm.apply_columns(times, [vm.column([0.0]), vm.column([-1.5])])  # type: ignore[list-item]
    assert got is not None and vm.atoms(got) is None
    big = [vm.column([2**40]), vm.column([2**20])]
    assert vm.apply_columns(times, big) is None  # type: ignore[arg-type]


FACTORS = st.one_of(
    st.sampled_from([1, -1, 2, 0, 1.0, -1.0, 0.5, 0.1, 3]),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e3, max_value=1e3),
    st.integers(-1000, 1000),
)


def _linear(a: object, b: object) -> object:
    """tracr's LinearSequenceMap(x, y, a, b), lowered: its function with its stated factors."""
    from rasp import tracr
    from rasp.tracr.lower import to_sops

    x, y = tracr.numerical(tracr.Map(lambda v: v, tracr.tokens)), tracr.indices
    return to_sops(tracr.LinearSequenceMap(x, y, a, b)).fn  # type: ignore[union-attr]


@settings(max_examples=200, deadline=None)
@given(FACTORS, FACTORS, st.lists(NUMBERS, min_size=1, max_size=30), st.data())
def test_tracr_linear_maps_agree_with_python(a, b, left, data) -> None:
    # the same products and sum as Python, and Python's type: int factors of ints give an int
    right = data.draw(st.lists(NUMBERS, min_size=len(left), max_size=len(left)))
    fn = _linear(a, b)
    assert fn.affine is not None
    _check(fn, [left, right])  # type: ignore[arg-type]


@settings(max_examples=100, deadline=None)
@given(FACTORS, FACTORS, st.lists(NUMBERS, min_size=1, max_size=30), st.data())
def test_a_tracr_output_s_rounding_agrees_with_python(a, b, left, data) -> None:
    from compiler.rounded import Rounded

    right = data.draw(st.lists(NUMBERS, min_size=len(left), max_size=len(left)))
    _check(Rounded(_linear(a, b)), [left, right])  # type: ignore[arg-type]


def test_rounded_has_a_signature_and_names_its_function() -> None:
    """`Rounded`'s `__wrapped__` was a property: `inspect.signature(Rounded)` follows a class's
    `__wrapped__` and raised on it, and Python 3.11.2's dataclass called it at import (to write the
    class's docstring), so `import compiler` failed there."""
    import inspect

    from compiler.rounded import Rounded

    assert list(inspect.signature(Rounded).parameters) == ["fn"]
    fn = _linear(1, 2)
    assert Rounded(fn).__wrapped__ is fn and inspect.unwrap(Rounded(fn)) is fn
    assert Rounded(fn) == Rounded(fn) and repr(Rounded(fn)) == f"Rounded(fn={fn!r})"


def test_the_tracr_maps_that_matter_answer() -> None:
    from compiler.rounded import Rounded

    # pair_balance: opens - closes over fractions and the ints of one-key means
    fractions = [k / 7 for k in range(8)] + [0, 1, True]
    assert _check(Rounded(_linear(1, -1)), [fractions, fractions[::-1]])  # type: ignore[arg-type]
    assert _check(_linear(2, 3), [[1, 2, True], [0, -5, False]])  # type: ignore[arg-type]
    # -0.0 beside 0.0 (factors -0.0): the rounding keeps them apart, as Python does, and the
    # column then declines (a -0.0 result is decided per row)
    assert not _check(Rounded(_linear(-0.0, -0.0)), [[0, 1.5], [0, -2.0]])  # type: ignore[arg-type]
    got = vm.apply_columns(
        Rounded(_linear(-0.0, -0.0)), [vm.column([0, 1.5]), vm.column([0, -2.0])]
    )  # type: ignore[list-item]
    assert got is not None and [v.hex() for v in got.num] == [(-0.0).hex(), (0.0).hex()]
    # tracr's `-` of two s-ops: the same as the lambda it builds
    from rasp import tracr
    from rasp.tracr.lower import to_sops

    minus = to_sops(tracr.numerical(tracr.tokens) - tracr.indices).fn  # type: ignore[union-attr]
    assert _check(minus, [[0.5, 0.0, True, 3, 2.0], [0.25, -0.0, 1, 3, True]])  # type: ignore[arg-type]
    # another tracr function, or a string argument: per row
    from rasp.tracr.functions import TracrFn

    other = TracrFn(lambda x, y: x - y, "f")
    assert vm.apply_columns(other, [vm.column([1]), vm.column([2])]) is None  # type: ignore[list-item]
    strings = [vm.column(["a"]), vm.column([1])]
    assert vm.apply_columns(_linear(1, 1), strings) is None  # type: ignore[arg-type]
