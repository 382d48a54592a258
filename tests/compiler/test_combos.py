"""compiler.combos gives exactly what the Python loops it replaces give (or declines)."""

from __future__ import annotations

import itertools
import random

from compiler.blocks import sort_values, value_key
from compiler.combos import MapTable, joint_rows
from compiler.relations import _joint_loop
from compiler.values import apply_map

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
