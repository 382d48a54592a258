"""`TwinTables.rows` (one vectorised table of a select's class rows) against the loop it replaced,
copied here from before the change: per pair, the outcome shared by the pairs of float64 twins
that can meet, else the pair's own comparison, or the located refusal where twins disagree. Drawn
adversarially: runs of twins (floats a few ulps apart, whole numbers past 2**53 that float64 cannot
tell apart, 1 and 1.0), NaN, infinities, -0.0, bools, None, strings, empty sides, lengths that
never meet or meet at every length, and chunks of one run at a time."""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import select_twins
from compiler.blocks import value_key
from compiler.fits import noise_clusters
from compiler.graph import IRNode, Op
from compiler.select_twins import TwinTables
from compiler.selector_cases import compare_matrix, safe_compare
from rasp import sops as S
from rasp.errors import CompileError

_THIRD = 2 / 3
_POOL = [
    *(math.nextafter(_THIRD, math.inf if k > 0 else -math.inf) for k in (-1, 1)),
    _THIRD,
    0.6666666666666669,
    0.3,
    0.1 + 0.2,
    0.0,
    -0.0,
    0,
    False,
    True,
    1,
    1.0,
    1.0000000000000002,
    2**53,
    2**53 + 1,
    float(2**53),
    2**60,
    2**60 + 1,
    -(2**60),
    math.nan,
    math.inf,
    -math.inf,
    None,
    "a",
    "",
    0.7071,
    1e300,
]


class _Refused(Exception):
    """The old loop's refusal, by its message's first part."""


class _Sets:
    """What TwinTables reads of a value analysis: values, per-(position, length) relations, and
    the memo its builds share (the tables compared once)."""

    def __init__(self, values: dict[int, tuple], relation: dict[int, dict | None]) -> None:
        self._values, self.value_sets, self.relation = values, self, relation
        self.memo: dict = {}
        # (the sides are computed s-ops, not the tokens: a refusal names float64 rounding)
        # (means: a map of s-ops without twins reads its twins apart, select_twins.TwinTables.apart)
        self.graph = {i: IRNode(i, Op.AGGREGATE, f"v{i}", (), None, f"v{i}") for i in values}

    def values(self, index: int) -> tuple:
        return self._values[index]


def _old_compare(sets: _Sets, node: IRNode) -> Callable:
    """`TwinTables(sets).compare(node)` as it was before `rows` (main, select_twins.py)."""
    runs_of: dict[int, dict] = {}
    for index in node.inputs:
        values = tuple(sets.values(index))
        runs: dict = {}
        for _, members in noise_clusters(values):
            run = tuple(values[i] for i in members)
            if len({value_key(v) for v in run}) > 1:
                runs.update((value_key(v), run) for v in run)
        runs_of[index] = runs

    def lengths(index: int, value: object) -> frozenset | None:
        relation = sets.relation[index]
        if relation is None:
            return None
        at: set = set()
        for (_, n), vs in relation.items():
            if any(value_key(v) == value_key(value) for v in vs):
                at.add(n)
        return frozenset(at)

    k_index, q_index = node.inputs
    comparison = node.comparison
    assert comparison is not None

    def holds(key: object, query: object) -> bool:
        ks, qs = runs_of[k_index].get(value_key(key)), runs_of[q_index].get(value_key(query))
        if ks is None and qs is None:
            return safe_compare(comparison, key, query)
        outcomes: dict = {}
        for a in ks or (key,):
            at_a = lengths(k_index, a)
            for b in qs or (query,):
                at_b = lengths(q_index, b)
                if at_a is not None and at_b is not None and not at_a & at_b:
                    continue
                outcomes[a, b] = safe_compare(comparison, a, b)
        if len(set(outcomes.values())) > 1:
            yes = next(p for p, h in outcomes.items() if h)
            no = next(p for p, h in outcomes.items() if not h)
            op = comparison.value
            raise _Refused(
                f"'{node.text}' holds for {yes[0]!r} {op} {yes[1]!r} but not for {no[0]!r} {op} "
                f"{no[1]!r}"
            )
        return next(iter(outcomes.values())) if outcomes else safe_compare(comparison, key, query)

    return holds


def _distinct(values: list) -> tuple:
    seen: dict = {}
    for v in values:
        seen.setdefault(value_key(v), v)
    return tuple(seen.values())


# twins of a few bases: a run of floats a few ulps apart
_twins = st.builds(
    lambda base, k: base + k * math.ulp(base),
    st.sampled_from([_THIRD, 0.3, 1.0, 0.2, 5.0, 2.0**52]),
    st.integers(-4, 4),
)
_values = st.lists(
    st.one_of(
        st.sampled_from(_POOL),
        _twins,
        _twins,
        st.floats(allow_nan=True, allow_infinity=True, width=64),
        st.integers(-(2**64), 2**64),
    ),
    max_size=9,
).map(_distinct)


@st.composite
def _relation(draw: st.DrawFn, values: tuple) -> dict | None:
    if draw(st.booleans()) and draw(st.booleans()):
        return None  # every value at every length
    at: dict = {}
    for v in values:
        # few lengths, so that twins often never meet; a length past the chunk of 64 bits
        for n in draw(st.lists(st.sampled_from([1, 2, 3, 1, 2, 3, 0, 200]), max_size=2)):
            at.setdefault((0, n), []).append(v)
    return {k: tuple(v) for k, v in at.items()}


@st.composite
def _case(draw: st.DrawFn) -> tuple:
    same = draw(st.booleans())  # select(x, x, op): one s-op on both sides
    values = {0: draw(_values)}
    values[1] = values[0] if same else draw(_values)
    relation = {0: draw(_relation(values[0]))}
    relation[1] = relation[0] if same else draw(_relation(values[1]))
    side = draw(st.integers(0, 1))
    mine = draw(st.permutations(values[side]))
    others = draw(st.permutations(values[1 - side]))
    # mostly whole sides (as `_class_reading` passes them), sometimes a part or nothing
    mine = mine[: draw(st.sampled_from([len(mine), len(mine), 0, len(mine) // 2]))]
    others = others[: draw(st.sampled_from([len(others), len(others), 0, len(others) // 2]))]
    comparison = draw(st.sampled_from(list(S.Comparison)))
    return _Sets(values, relation), comparison, side, list(mine), list(others)


def _node(comparison: S.Comparison) -> IRNode:
    return IRNode(2, Op.SELECT, "s", (0, 1), None, "select(k, q, op)", comparison=comparison)


def _outcome(run: Callable[[], list]) -> object:
    try:
        return run()
    except CompileError as err:
        # the pair refused, not why (twins set apart on purpose are told so: select_twins._set_apart)
        return re.split(
            r"[,:] (?:numbers that|numbers closer than|different whole numbers)",
            err.diagnostics[0].message,
        )[0]
    except _Refused as err:
        return str(err)


@pytest.mark.parametrize("chunk", [1 << 21, 3, 1])
def test_rows_are_the_old_loop_over_pairs(chunk: int) -> None:
    @settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck))
    @given(case=_case())
    def check(case: tuple) -> None:
        sets, comparison, side, values, others = case
        node = _node(comparison)
        old = _old_compare(sets, node)

        def loop() -> list:
            pairs = [[(v, o) if side == 0 else (o, v) for o in others] for v in values]
            return [tuple(bool(old(*p)) for p in row) for row in pairs]

        def table() -> list:
            return TwinTables(sets).rows(node, values, others, side)  # type: ignore[arg-type]

        got, want = _outcome(table), _outcome(loop)
        assert got == want, (comparison, side, values, others)
        if isinstance(got, list):  # Python bools, as the loop gave: the rows key a dict
            assert all(type(b) is bool for row in got for b in row)

    original = select_twins._CHUNK
    select_twins._CHUNK = chunk
    try:
        check()
    finally:
        select_twins._CHUNK = original


def test_a_chunk_counts_the_members_of_its_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks hold at most `_CHUNK` (query member, key member) pairs, however long the runs of
    twins they take whole (they were cut by runs: runs of 4 made chunks 4 times too big)."""
    runs = [_THIRD + k * math.ulp(_THIRD) for k in range(4)] + [0.3 + k * 2**-54 for k in range(4)]
    sets = _Sets({0: (0.1, 0.9), 1: (*runs, 0.5, 0.7)}, {0: None, 1: None})
    shapes: list[tuple[int, ...]] = []

    def recorded(comparison: S.Comparison, keys: list, queries: list) -> object:
        shapes.append((len(queries), len(keys)))
        return compare_matrix(comparison, keys, queries)

    monkeypatch.setattr(select_twins, "compare_matrix", recorded)
    monkeypatch.setattr(select_twins, "_CHUNK", 8)
    node = _node(S.Comparison.LT)
    rows = TwinTables(sets).rows(node, list(sets.values(1)), [0.1, 0.9], 1)  # type: ignore[arg-type]
    assert rows == [(True, False)] * 10
    *chunks, whole = shapes  # the last: every listed pair, compared as the pair itself
    assert whole == (10, 2)
    assert sum(q for q, _ in chunks) == 10 and all(q * k <= 8 for q, k in chunks)
    assert select_twins._chunks([4, 1, 1, 4, 4, 9], 4) == [(0, 1), (1, 3), (3, 4), (4, 5), (5, 6)]
