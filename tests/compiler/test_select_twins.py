"""A select whose outcome differs between float64 twins that can meet is refused, located
(compiler.select_twins); twins that compare alike, or never meet, get the outcome they share."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest
from test_compile import all_inputs, check_inputs

from compiler import compile_sop, select_twins
from compiler.fits import merge_noise, noise_clusters
from compiler.graph import IRNode, Op
from compiler.select_twins import TwinTables
from rasp import sops as S
from rasp.errors import CompileError
from tests.compiler.loose_sums import means_of_counts_as_any_mean
from tests.compiler.test_total_orders import _program


@pytest.fixture(autouse=True)
def _means_of_counts_as_any_mean(monkeypatch: pytest.MonkeyPatch) -> None:
    # this file's programs read means of counts as noisy means: since session 70 the value
    # analysis knows such a mean is the count (compiler.values.uniform_keys_average_copies) and
    # proves them; the refusals and builds tested here are reached with it switched off
    means_of_counts_as_any_mean(monkeypatch)


# `again` is the mean of n copies of `frac`: 2/3 summed and divided comes out as ...664, ...666,
# ...667 or ...669 depending on n, so `frac < again` on equal numbers holds on some inputs only.
# One column stood for all those twins, its table entry written from one of them: the model
# selected keys on "aab" (and 14 more of 120 inputs at N = 4), where the interpreter selects none.
MEAN_OF_EQUAL_MEANS = """
frac = aggregate(select(tokens, "c", <), indicator(tokens == "a"));
again = aggregate(select(1, 1, ==), frac);
"""


@pytest.mark.parametrize(
    ("selector", "named"),
    [
        ("select(frac, again, <)", "'select(frac, again, <)' holds for "),
        ("select(again, frac, ==)", "'select(again, frac, ==)' holds for "),
        # a constant query: the select is a bool of its keys (compiler.constant_sides), the map
        # `again < 1 / 5`, whose planner refuses the twins in its own words
        ("select(again, 1 / 5, <)", "'again < 1 / 5' gives False at 0.2 and True at 0.19999"),
    ],
)
def test_a_select_that_tells_twins_apart_is_refused(selector: str, named: str) -> None:
    root = _program(MEAN_OF_EQUAL_MEANS + f"res = selector_width({selector});")
    with pytest.raises(CompileError) as caught:
        compile_sop(root, list("abc"), 5)
    (diagnostic,) = caught.value.diagnostics
    assert "differ only by float64 rounding" in diagnostic.message
    assert named in diagnostic.message
    assert diagnostic.span is not None


def test_two_close_tokens_are_named_as_tokens_not_as_rounding() -> None:
    """Tokens 1.0 and 1.0000000001 are two numbers the user wrote, not one that float64 rounding
    told apart: the refusal said "numbers that differ only by float64 rounding"."""
    root = _program("res = selector_width(select(tokens_float, tokens_float, <));")
    with pytest.raises(CompileError) as caught:
        compile_sop(root, [1.0, 1.0000000001, 2], 3)
    (diagnostic,) = caught.value.diagnostics
    assert "float64 rounding" not in diagnostic.message
    assert (
        "tokens less than 1e-09 apart (relative), which a compiled model reads as one number"
        in (diagnostic.message)
    )
    assert diagnostic.hint is not None and "tokens further apart" in diagnostic.hint


def test_the_refusal_names_the_two_twins() -> None:
    root = _program(MEAN_OF_EQUAL_MEANS + "res = aggregate(select(frac, again, <), 1, 0);")
    with pytest.raises(CompileError) as caught:
        compile_sop(root, list("abc"), 4)
    message = caught.value.diagnostics[0].message
    assert "0.6666666666666666 < 0.6666666666666667" in message
    assert "not for 0.6666666666666666 < 0.6666666666666666" in message


def test_twins_that_compare_alike_compile_exactly() -> None:
    # every twin of each value (2/3, 1/5, ...) is below 0.7071 or not, all alike
    root = _program(MEAN_OF_EQUAL_MEANS + "res = selector_width(select(again, 0.7071, <));")
    model = compile_sop(root, list("abc"), 5)
    inputs = all_inputs("abc", 5)
    assert check_inputs(model, root, inputs) == len(inputs)


def test_noise_clusters_keep_what_merge_noise_keeps() -> None:
    values = [2 / 3, 0.6666666666666669, 0.6666666666666664, 0.5, 1, 1.0, "a", 0.1 + 0.2, 0.3]
    clusters = noise_clusters(values)
    runs = sorted(sorted(values[i] for i in members) for _, members in clusters)
    assert runs == [
        [0.3, 0.30000000000000004],
        [0.5],
        [0.6666666666666664, 0.6666666666666666, 0.6666666666666669],
        [1, 1.0],
    ]
    kept = {values[k] for k, members in clusters}
    assert set(merge_noise(values)) - {"a"} == kept | {1.0}  # equal numbers (1, 1.0) both stay
    assert merge_noise(values) == (0.6666666666666669, 0.5, 1, 1.0, "a", 0.3)


class _Sets:
    """The parts of a value analysis TwinTables reads: values, per-(i, n) relations, and the
    memo its builds share (the tables compared once)."""

    def __init__(self, values: dict[int, tuple], relation: dict[int, dict | None]) -> None:
        self._values = values
        self.value_sets = self
        self.relation = relation
        self.memo: dict = {}
        # (the sides are means, not the tokens: a refusal names float64 rounding; nor maps of
        # s-ops without twins, whose twins are read apart: test_twins_of_a_map_are_read_apart)
        self.graph = {i: IRNode(i, Op.AGGREGATE, f"v{i}", (), None, f"v{i}") for i in values}

    def values(self, index: int) -> tuple:
        return self._values[index]


def _select(comparison: S.Comparison) -> IRNode:
    return IRNode(2, Op.SELECT, "s", (0, 1), None, "select(k, q, op)", comparison=comparison)


def test_an_entry_is_what_the_twins_that_can_meet_share() -> None:
    twin = 0.1 + 0.2  # 0.30000000000000004, a twin of 0.3
    values = {0: (0.3, twin), 1: (0.3,)}
    # keys: the twin at length 1 only, 0.3 at length 2 only; queries: 0.3 at length 1 only
    relation = {0: {(0, 1): (twin,), (0, 2): (0.3,)}, 1: {(0, 1): (0.3,)}}
    equal = TwinTables(_Sets(values, relation)).compare(_select(S.Comparison.EQ))  # type: ignore[arg-type]
    # the listed key 0.3 stands for both twins; only the twin meets the query 0.3 (at length 1)
    assert equal(0.3, 0.3) is False and equal(twin, 0.3) is False
    # where both twins meet the query, they disagree: refused
    relation[1] = {(0, 1): (0.3,), (0, 2): (0.3,)}
    equal = TwinTables(_Sets(values, relation)).compare(_select(S.Comparison.EQ))  # type: ignore[arg-type]
    with pytest.raises(CompileError, match="holds for 0.3 == 0.3 but not for 0.30000000000000004"):
        equal(0.3, 0.3)
    # no relation: every value at every length, so they meet
    leq = TwinTables(_Sets(values, {0: None, 1: None})).compare(_select(S.Comparison.LEQ))  # type: ignore[arg-type]
    with pytest.raises(CompileError):
        leq(twin, 0.3)
    # values without twins compare as Python does
    plain = TwinTables(_Sets({0: (1, 2), 1: (2,)}, {0: None, 1: None}))  # type: ignore[arg-type]
    assert plain.compare(_select(S.Comparison.LT))(1, 2) is True


_POOL = [0.3, 0.1 + 0.2, 2 / 3, 0.6666666666666669, 0.6666666666666664, 0.5, 1, 1.0, True]
_POOL += [False, 0, 2, None, "a", "", float("nan"), float("inf"), 2**60, 0.7071]


def _random_sets(rng: random.Random) -> _Sets:
    values = {i: tuple(rng.sample(_POOL, rng.randint(1, 9))) for i in (0, 1)}
    relation: dict[int, dict | None] = {}
    for i, vs in values.items():
        if rng.random() < 0.25:
            relation[i] = None  # every value at every length
            continue
        at: dict = {}
        for v in vs:  # a few lengths each (some none: a value the analysis never meets)
            for n in rng.sample(range(1, 6), rng.randint(0, 3)):
                at.setdefault((0, n), []).append(v)
        relation[i] = {k: tuple(v) for k, v in at.items()}
    return _Sets(values, relation)


def _outcome(run: Callable[[], list]) -> object:
    try:
        return run()
    except CompileError as err:
        return err.render()


@pytest.mark.parametrize("chunk", [1 << 21, 2])
def test_rows_give_what_compare_gives_pair_by_pair(
    chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`TwinTables.rows` (one table of every pair) against the loop over `compare` it replaces
    (`_class_reading`'s rows): the same rows, or the same refusal, on both sides, for values
    with and without twins, never meeting, meeting at every length, and of other types; in one
    chunk and in chunks of a run or two."""
    monkeypatch.setattr(select_twins, "_CHUNK", chunk)
    rng = random.Random(5 + chunk)
    for _ in range(1000):
        sets = _random_sets(rng)
        node = _select(rng.choice(list(S.Comparison)))
        side = rng.randint(0, 1)
        mine, other = sets.values(side), sets.values(1 - side)
        values = list(rng.sample(mine, rng.randint(0, len(mine))))
        others = list(rng.sample(other, rng.randint(0, len(other))))

        def loop(sets: _Sets = sets, side: int = side, values=values, others=others) -> list:  # noqa: ANN001
            compare = TwinTables(sets).compare(node)  # type: ignore[arg-type]
            pairs = [[(v, o) if side == 0 else (o, v) for o in others] for v in values]
            return [tuple(compare(*p) for p in row) for row in pairs]

        def table(sets: _Sets = sets, side: int = side, values=values, others=others) -> list:  # noqa: ANN001
            return TwinTables(sets).rows(node, values, others, side)  # type: ignore[arg-type]

        assert _outcome(table) == _outcome(loop), (node.comparison, side, values, others)


def test_twins_set_apart_on_purpose_are_not_named_as_rounding() -> None:
    """InterpBench's largest token (cases 97, 98) breaks ties with `x + indices * 1e-14`: 0.0 and
    1e-14 are twins a float32 model reads as one number, but no rounding set them 1e-14 apart: the
    refusal said "numbers that differ only by float64 rounding". The map's own twins are read
    apart (a column each); copied through a numerical aggregate they are one number, refused."""
    from rasp import tracr as rasp

    unique = rasp.SequenceMap(lambda x, y: x + y * 0.00000000000001, rasp.tokens, rasp.indices)
    compile_sop(rasp.SelectorWidth(rasp.Select(unique, unique, rasp.Comparison.LEQ)), [0, 1, 2], 3)
    same = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.EQ)
    copied = rasp.numerical(rasp.Aggregate(same, unique, default=0))
    leq = rasp.SelectorWidth(rasp.Select(copied, copied, rasp.Comparison.LEQ))
    with pytest.raises(CompileError) as caught:
        compile_sop(leq, [0, 1, 2], 3)
    (diagnostic,) = caught.value.diagnostics
    assert "float64 rounding" not in diagnostic.message
    assert "closer than 1e-09" in diagnostic.message and diagnostic.span is not None
    assert "instead of a tiny offset" in diagnostic.hint


class _Canon:
    """A plan's `Built.canonical` where s-op `index`'s reading writes `merged` into `kept`'s column."""

    def __init__(self, index: int, merged: object, kept: object) -> None:
        self.index, self.merged, self.kept = index, merged, kept

    def canonical(self, index: int, value: object) -> object:
        return self.kept if index == self.index and value == self.merged else value


def test_twins_of_a_map_are_read_apart() -> None:
    """A map over s-ops without twins gives each twin for its own inputs (tracr's keys
    hist + 2 * i / 6: 1 + 4/3 and 2 + 1/3, both 7/3, told apart by float64), and its table writes
    each in a column of its own: its twins compare as themselves. Where its reading shares a column
    among them (decoded from its number), the entry is their shared outcome, refused as before."""
    twin = 0.1 + 0.2
    values = {0: (0.3, twin), 1: (0.3, twin), 3: (1, 2)}
    sets = _Sets(values, {0: None, 1: None, 3: None})
    sets.graph[0] = IRNode(0, Op.MAP, "v0", (3,), None, "v0")
    sets.graph[1] = IRNode(1, Op.MAP, "v1", (0,), None, "v1")  # a map of a map read apart
    node = _select(S.Comparison.LT)
    tables = TwinTables(sets, _Canon(0, None, None))  # type: ignore[arg-type]
    assert tables.apart(0) and tables.apart(1) and not tables.apart(3)
    assert tables.compare(node)(0.3, twin) is True and tables.compare(node)(twin, 0.3) is False
    assert tables.table(node, [0.3, twin], [0.3, twin]).tolist() == [[False, False], [True, False]]
    # a reading that lists one twin only, or writes one into the other's column: shared, refused
    with pytest.raises(CompileError, match="differ only by float64 rounding"):
        TwinTables(sets, _Canon(0, None, None)).table(node, [0.3], [0.3, twin])  # type: ignore[arg-type]
    merged = TwinTables(sets, _Canon(1, twin, 0.3))  # type: ignore[arg-type]
    with pytest.raises(CompileError, match="differ only by float64 rounding"):
        merged.table(node, [0.3, twin], [0.3, twin])
    with pytest.raises(CompileError, match="differ only by float64 rounding"):
        merged.joint_compare(node)(0.3, 0.3)
    # a map of a mean's twins is not read apart: the mean's number cannot tell them apart
    sets.graph[3] = IRNode(3, Op.AGGREGATE, "v3", (), None, "v3")
    sets._values[3] = (0.3, twin)
    assert not TwinTables(sets).apart(0)  # type: ignore[arg-type]
