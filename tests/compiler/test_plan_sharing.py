"""What the builds of one compile share: one value analysis per form (compiler.driver), and a
map's rows merged into its support's canonical values once for every build whose support tables
are alike (compiler.merged_rows), never where a table differs; the model is the same either way."""

from __future__ import annotations

import math

import numpy as np
import pytest

import compiler.driver as driver
from compiler import compile_sop, gates, merged_rows
from compiler.map_rows import MapRows
from compiler.plan_state import Built
from compiler.row_memo import AnalysisRows, rows_having
from rasp.errors import CompileError, Source
from rasp.interpreter import load_source
from rasp.sops import SOp

# numeric seed 2070534: a mean times (length - another mean), planned in several builds (gated,
# steps, a one-hot output, the means decoded); at N = 8 each build merged the same rows of the
# product again and fitted them per context, ~185 s of CPU to its refusal
MEAN_TIMES = """
v0 = aggregate(full_s, indicator(tokens == "a"), 1);
v1 = aggregate(not select(v0, v0, >=), v0, -1);
v2 = aggregate(select(indices, indices, <), indicator(tokens == "b"), 0);
res = (v1 * (length - v2));
"""


def _program() -> SOp:
    root = load_source(Source("<test>", MEAN_TIMES)).get("res")
    assert isinstance(root, SOp)
    return root


def _compile(n: int) -> dict[str, np.ndarray] | str:
    try:
        return dict(compile_sop(_program(), ["a", "b"], n).weights)
    except CompileError as err:
        return str(err)


def _counting(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    counts = {"analyses": 0, "merges": 0, "fits": 0}
    infer, merge, fits = driver.infer_values, MapRows._merge, gates._context_fits

    def counted_infer(*args, **kwargs):  # type: ignore[no-untyped-def]
        counts["analyses"] += 1
        return infer(*args, **kwargs)

    def counted_merge(self, *args):  # type: ignore[no-untyped-def]
        counts["merges"] += 1
        return merge(self, *args)

    def counted_fits(*args):  # type: ignore[no-untyped-def]
        counts["fits"] += 1
        return fits(*args)

    monkeypatch.setattr(driver, "infer_values", counted_infer)
    monkeypatch.setattr(gates, "_context_fits", counted_fits)
    monkeypatch.setattr(MapRows, "_merge", counted_merge)
    return counts


def test_builds_share_the_analysis_and_merged_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """At N = 5 the program is refused after six builds merged the product's rows and fitted
    them per context value (and the last, the means decoded, analysed the form again): now one
    analysis, one merge, one fit (the context reading has every value: no row dropped)."""
    counts = _counting(monkeypatch)
    # (since session 69 the driver's last build, a one-hot output of the maps of maps fused,
    # proves it: 90.4M parameters, 32 s; without it, the refusal these builds share)
    monkeypatch.setattr("compiler.driver.fused_output_instead", lambda kept, *args: kept)
    refused = _compile(5)
    assert isinstance(refused, str) and "snap decision" in refused
    assert counts == {"analyses": 1, "merges": 1, "fits": 1}


def test_rows_having_shares_what_it_keeps() -> None:
    """Rows filtered alike in two builds share their derived results; rows of which nothing is
    dropped are the rows themselves; another set of values dropped is rows of its own."""
    rows = AnalysisRows([((1, "a"), 1), ((2, "b"), 2), ((3, "a"), 3)], {})
    again = AnalysisRows(rows, rows.shared)  # (another build's copy)
    assert rows_having(rows, 1, lambda v: True) is rows
    kept = rows_having(rows, 1, lambda v: v == "a")
    assert kept == [((1, "a"), 1), ((3, "a"), 3)]
    assert rows_having(again, 1, lambda v: v != "b").shared is kept.shared
    other = rows_having(again, 1, lambda v: v == "b")
    assert other == [((2, "b"), 2)] and other.shared is not kept.shared


def test_the_model_is_the_same_unshared(monkeypatch: pytest.MonkeyPatch) -> None:
    """Merged anew in every build (no key), the compile gives the same weights and refusals."""
    shared = [_compile(n) for n in (3, 4)]
    counts = _counting(monkeypatch)
    monkeypatch.setattr(merged_rows, "tables_key", lambda built, support: None)
    alone = [_compile(n) for n in (3, 4)]
    assert counts["merges"] > 2
    for a, b in zip(shared, alone, strict=True):
        if isinstance(a, str):
            assert a == b
        else:
            assert isinstance(b, dict) and a.keys() == b.keys()
            assert all(np.array_equal(a[k], b[k]) for k in a)


def _built(canon: dict, twins: dict | None = None) -> Built:
    built = Built()
    built.canon[0] = canon
    if twins is not None:
        built.twins[0] = twins
    return built


def _rows_of(memo: dict, built: Built, made: list[int]) -> list:
    def merge() -> tuple[list, merged_rows.Twins]:
        made.append(1)
        return [((1,), 2.0)], [(("int", 2), ("float", 2.0), 2.0)]

    return merged_rows.shared(memo, built, 5, (0,), merge)


def test_equal_tables_hit_and_note_the_twins() -> None:
    memo: dict = {}
    made: list[int] = []
    first, second = _built({("float", 1.0): 1}), _built({("float", 1.0): 1})
    rows = _rows_of(memo, first, made)
    again = _rows_of(memo, second, made)
    assert made == [1] and rows == again == [((1,), 2.0)]
    assert rows is not again and rows.shared is again.shared  # each its own list, one memo
    assert first.twins[5] == second.twins[5] == {("int", 2): {("float", 2.0): 2.0}}


@pytest.mark.parametrize(
    "other",
    [
        {("float", 1.0): 1.0},  # the value a table writes: 1 against 1.0
        {("float", 1.0): True},
        {("float", 1.0): 1, ("int", 3): 3},  # one entry more
        {("int", 1): 1},  # the key
    ],
)
def test_a_table_differing_in_any_field_misses(other: dict) -> None:
    memo: dict = {}
    made: list[int] = []
    _rows_of(memo, _built({("float", 1.0): 1}), made)
    _rows_of(memo, _built(other), made)
    assert made == [1, 1]


def test_twins_and_odd_values_miss() -> None:
    memo: dict = {}
    made: list[int] = []
    _rows_of(memo, _built({("float", 1.0): 1}), made)
    _rows_of(memo, _built({("float", 1.0): 1}, {("float", 2.0): {("int", 2): 2}}), made)
    assert made == [1, 1]
    nan = _built({("float", math.nan): math.nan})  # a NaN key is found by identity alone
    odd = _built({("float", 1.0): np.float64(1.0)})  # its repr does not spell its type
    for built in (nan, nan, odd, odd):
        assert merged_rows.tables_key(built, (0,)) is None
        _rows_of(memo, built, made)
    assert made == [1, 1, 1, 1, 1, 1]
