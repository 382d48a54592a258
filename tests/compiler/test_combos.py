"""compiler.combos gives exactly what the Python loops it replaces give (or declines)."""

from __future__ import annotations

import itertools
import operator
import random

import pytest

from compiler import combos, vector_maps
from compiler.blocks import sort_values, value_key
from compiler.combos import MapTable, TooManyRows, joint_rows
from compiler.map_values import apply_map
from compiler.relations import _joint_loop, input_combinations
from rasp import arithmetic
from rasp import operators as ops

POOL = [0, 1, 2, 3, 1.0, 0.5, -1.5, True, False, "a", "1", 7, 2.0, float("inf")]


def _sets(rng: random.Random, n: int, width: int) -> list[list[tuple]]:
    interned: dict[tuple, tuple] = {}

    def one() -> tuple:
        t = sort_values(rng.sample(POOL, rng.randint(0, 5)))
        return interned.setdefault(tuple(value_key(v) for v in t), t)

    return [[one() for _ in range(width)] for _ in range(n)]


def test_joint_rows_equal_the_loop() -> None:
    rng = random.Random(0)
    for _ in range(300):
        groups = _sets(rng, rng.randint(1, 6), rng.randint(1, 3))
        fast = joint_rows(groups)
        slow = _joint_loop(groups)
        assert fast is not None
        assert [tuple(value_key(v) for v in r) for r in fast] == [
            tuple(value_key(v) for v in r) for r in slow
        ]


def test_joint_rows_decline_negative_zero_and_nan() -> None:
    assert joint_rows([[(-0.0, 1)]]) is None
    assert joint_rows([[(float("nan"),)]]) is None
    assert joint_rows([[(None,)]]) is None


def test_map_table_equals_the_loop() -> None:
    rng = random.Random(1)
    fns = [
        lambda x, y: x - y,
        lambda x, y: x if y else y,
        lambda x, y: str(x) + str(y),
        lambda x, y: x / y,
        lambda x, y: x == y,
    ]
    for _ in range(200):
        fn = rng.choice(fns)
        table = MapTable(2, lambda args, fn=fn: apply_map(fn, args))
        for a, b in _sets(rng, 5, 2):
            fast = table.outputs([a, b])
            outs = [out for ok, out in (apply_map(fn, p) for p in itertools.product(a, b)) if ok]
            if fast is None:  # declined (a NaN, -0.0 or a value of another type)
                continue
            assert [value_key(v) for v in sort_values(fast)] == [
                value_key(v) for v in sort_values(outs)
            ]


def test_map_table_on_columns_equals_the_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    # an operator's map is applied to many argument pairs at once (compiler.vector_maps); sets of
    # fractions, whole floats and ints, large enough for both the code and the array lookups
    calls = []
    apply_columns = vector_maps.apply_columns
    monkeypatch.setattr(
        vector_maps, "apply_columns", lambda *a: calls.append(1) or apply_columns(*a)
    )
    rng = random.Random(2)
    fractions = [k / d for d in range(1, 40) for k in range(d + 1)] + list(range(-3, 4))
    fns = [operator.sub, arithmetic.times, operator.truediv, operator.lt, operator.eq, operator.mod]
    for _ in range(40):
        fn = ops.Lifted(rng.choice(fns), (None, None), (0, 1))
        columns = MapTable(2, lambda args, fn=fn: apply_map(fn, args), fn)
        loop = MapTable(2, lambda args, fn=fn: apply_map(fn, args))
        for _ in range(4):
            a, b = (tuple(sort_values(rng.sample(fractions, rng.randint(5, 60)))) for _ in "ab")
            fast, slow = columns.outputs([a, b]), loop.outputs([a, b])
            assert (fast is None) == (slow is None)
            if fast is not None:
                assert sorted(map(value_key, fast)) == sorted(map(value_key, slow))  # type: ignore[arg-type]
    assert len(calls) > 100


def test_input_combinations_refuse_more_rows_than_the_limit_before_building_them() -> None:
    # two inputs related per position: (i + 2)^2 pairs of prefix fractions at each i
    n = 40
    rel_a = {(i, n): tuple(k / (i + 1) for k in range(i + 2)) for i in range(n)}
    rel_b = {p: tuple(sorted(set(v) | {-1})) for p, v in rel_a.items()}
    values = [tuple(sorted({v for s in r.values() for v in s})) for r in (rel_a, rel_b)]
    rows = input_combinations((0, 1), [rel_a, rel_b], values)
    assert input_combinations((0, 1), [rel_a, rel_b], values, limit=len(rows)) == rows
    with pytest.raises(TooManyRows):
        input_combinations((0, 1), [rel_a, rel_b], values, limit=len(rows) - 1)


def test_the_loop_path_refuses_more_rows_than_the_limit_as_it_goes() -> None:
    # A value the arrays decline (-0.0) sends the rows to the loop, which kept every distinct row
    # before the limit was checked: tracr's shuffle_dyck2 at N = 256 grew past 18 GB that way.
    n = 40
    rel_a = {(i, n): (-0.0, *(k / (i + 1) for k in range(1, i + 2))) for i in range(n)}
    rel_b = {p: tuple(sorted(set(v) | {-1})) for p, v in rel_a.items()}
    values = [tuple(sorted({v for s in r.values() for v in s})) for r in (rel_a, rel_b)]
    assert joint_rows([[rel_a[(0, n)], rel_b[(0, n)]]]) is None  # the loop's case
    rows = input_combinations((0, 1), [rel_a, rel_b], values)
    assert input_combinations((0, 1), [rel_a, rel_b], values, limit=len(rows)) == rows
    with pytest.raises(TooManyRows):
        input_combinations((0, 1), [rel_a, rel_b], values, limit=len(rows) - 1)

    class Unreached:  # a group the loop must not get to once it is past the limit
        def __iter__(self):
            raise AssertionError("the loop went on past the limit")

    groups = [[rel_a[(i, n)], rel_b[(i, n)]] for i in range(n)]
    with pytest.raises(TooManyRows):
        _joint_loop([*groups[:20], Unreached()], limit=100)  # type: ignore[list-item]
    # one position's own product past the limit (refused before the loop starts)
    big = {(i, n): rel_a[(n - 1, n)] for i in range(n)}
    with pytest.raises(TooManyRows):
        input_combinations((0, 1), [big, big], [values[0], values[0]], limit=(n + 1) ** 2 - 1)


def test_map_table_past_its_table_limit_equals_the_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    # more ids than the array table holds (two prefix means at N = 256): every code of a product
    # is computed as columns at once, and gives what the loop gives, a declined map included
    monkeypatch.setattr(combos, "TABLE_MAX", 16)
    rng = random.Random(3)
    fractions = [k / d for d in range(1, 40) for k in range(d + 1)] + list(range(-3, 4))
    fns = [operator.sub, arithmetic.times, operator.truediv, operator.lt, operator.mod]
    for _ in range(30):
        fn = ops.Lifted(rng.choice(fns), (None, None), (0, 1))
        columns = MapTable(2, lambda args, fn=fn: apply_map(fn, args), fn)
        declined = False
        for _ in range(3):
            a, b = (tuple(sort_values(rng.sample(fractions, rng.randint(20, 60)))) for _ in "ab")
            fast = columns.outputs([a, b])
            outs = [out for ok, out in (apply_map(fn, p) for p in itertools.product(a, b)) if ok]
            if any(combos.plain(v) is False for v in outs):
                assert fast is None  # a -0.0 (0.0 * -1): the loop keeps the last of equal keys
                declined = True
                continue
            assert fast is not None
            assert sorted(map(value_key, fast)) == sorted(set(map(value_key, outs)))
        assert declined or columns.results == {}  # nothing looked up one code at a time


def test_ids_of_mixed_sets_equal_value_keys() -> None:
    # ids are found by (type, value): 1, 1.0 and True are three ids, as value_key tells them apart
    ids = combos.Ids()
    first = (1, 1.0, True, "1", 2.5)
    assert ids.of(first) == [0, 1, 2, 3, 4]
    assert ids.of((2.5, False, 1.0, 0)) == [4, 5, 1, 6]
    assert [value_key(v) for v in ids.objects] == [
        value_key(v) for v in (1, 1.0, True, "1", 2.5, False, 0)
    ]
    assert ids.of((1, -0.0)) is None
    assert ids.of((float("nan"),)) is None
    assert ids.of((None,)) is None
    assert len(ids.objects) == 7  # a declined set adds no id
