"""compiler.resolve and compiler.predicates: a Python select predicate becomes ordinary selects that
select exactly the same keys, for every pair of key and query values (hypothesis over random
tables); each recognisable form gets its cheap selects; tracr means become plain aggregates with the
same values; a RASP program passes through untouched."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from runtime_helpers import run_compiled

from compiler import compile_sop
from compiler.predicates import Rebuild, table_of
from compiler.resolve import resolve
from rasp import sops
from rasp import tracr as rasp
from rasp.interpreter import load_file
from rasp.tracr import lib
from rasp.tracr.lower import to_sops

VALUE_SETS = [
    [0, 1, 2, 3, 4],
    ["a", "b", "c", "d"],
    [1, 2.5, "x"],
]


def _rebuilt(values: list, table: list[list[bool]]) -> sops.Selector:
    node = sops.TokensSOp(kind=sops.TokenKind.ASIS, loose=True)
    return Rebuild(node, node, values, values, table, name=None, span=None).selector()


def _selected(selector: sops.Selector, values: list) -> list[list[bool]]:
    # One input holding every value once: cell [q][k] is the pair (values[k], values[q]).
    return sops.evaluate(selector, values).tolist()


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_any_table_is_rebuilt_exactly(data: st.DataObject) -> None:
    values = data.draw(st.sampled_from(VALUE_SETS))
    n = len(values)
    table = data.draw(
        st.lists(st.lists(st.booleans(), min_size=n, max_size=n), min_size=n, max_size=n)
    )
    assert _selected(_rebuilt(values, table), values) == table


@pytest.mark.parametrize(
    ("predicate", "form"),
    [
        (lambda k, q: k < q, "select"),  # a comparison: the values themselves
        (lambda k, q: q == k + 1, "select"),  # an equivalence: == of labels
        (lambda k, q: k % 2 != q % 2, "select"),  # the complement of one: !=
        (lambda k, q: k <= q - 2, "select"),  # a threshold: <= of levels
        (lambda k, q: abs(k - q) <= 1, "and"),  # an interval: two thresholds
        (lambda k, q: (k * 7 + q * 3 + k * q) % 5 < 2, "and"),  # anything: != per row, joined
    ],
)
def test_each_form(predicate: object, form: str) -> None:
    values = list(range(6))
    table = table_of(predicate, values, values)  # type: ignore[arg-type]
    selector = _rebuilt(values, table)
    kind = {sops.Select: "select", sops.SelectAnd: "and"}[type(selector)]
    assert kind == form
    assert _selected(selector, values) == table


def test_thresholds_within_classes_are_one_equality_and_one_threshold() -> None:
    # within each parity, k at or before q: no interval in sorted order (k + 1 is skipped), so
    # the conjunction took one atom per query row; now two selects, whatever the number of rows
    values = list(range(12))
    table = table_of(lambda k, q: k % 2 == q % 2 and k <= q, values, values)
    selector = _rebuilt(values, table)
    assert isinstance(selector, sops.SelectAnd)
    parts = [selector.left, selector.right]
    assert [type(p) for p in parts] == [sops.Select, sops.Select]
    assert [p.comparison for p in parts] == [sops.Comparison.EQ, sops.Comparison.LEQ]  # type: ignore[union-attr]
    assert _selected(selector, values) == table
    # a query that selects nothing and a key no query selects keep out of every class
    table = table_of(lambda k, q: q != 0 and k != 5 and k % 2 == q % 2 and k <= q, values, values)
    selector = _rebuilt(values, table)
    assert isinstance(selector.left, sops.Select)  # type: ignore[union-attr]
    assert _selected(selector, values) == table


def test_a_comparison_keeps_the_program_s_own_sops() -> None:
    selector = _rebuilt([0, 1, 2], table_of(lambda k, q: k >= q, [0, 1, 2], [0, 1, 2]))
    assert isinstance(selector, sops.Select) and selector.comparison is sops.Comparison.GEQ
    assert isinstance(selector.keys, sops.TokensSOp)


def test_a_rasp_program_is_not_touched() -> None:
    reverse = load_file("programs/reverse.rasp").get("reverse")
    assert resolve(reverse, list("abc"), 5) is reverse


def test_tracr_means_become_plain_aggregates_with_the_same_values() -> None:
    upto = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)
    frac = rasp.numerical(rasp.Aggregate(upto, rasp.tokens == "x", default=0))
    shifted = rasp.Aggregate(
        rasp.Select(rasp.indices, rasp.indices, lambda k, q: q == k + 1), rasp.tokens == "x"
    )
    ints = rasp.Aggregate(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.LT), rasp.tokens)
    for program, vocab in ((frac, "xa"), (shifted, "xa"), (ints, [1, 2, 3])):
        graph = resolve(to_sops(program), list(vocab), 4)
        assert not any(getattr(n, "bools_as_numbers", False) for n in sops.walk(graph))
        assert not any(isinstance(n, sops.PredicateSelect) for n in sops.walk(graph))
        for n in range(1, 5):
            for xs in itertools.product(list(vocab), repeat=n):
                got = sops.evaluate(graph, list(xs))
                assert isinstance(got, sops.SeqValue)
                want = program(list(xs))
                assert all(
                    g == w if not isinstance(w, float) else abs(g - w) < 1e-9
                    for g, w in zip(got.values, want, strict=True)
                ), xs
    # One selected bool stays a bool where one key at most is selected; a mean is a number.
    assert sops.evaluate(resolve(to_sops(shifted), list("xa"), 4), list("xx")).values == (
        None,
        True,
    )
    assert sops.evaluate(resolve(to_sops(frac), list("xa"), 4), list("x")).values == (1,)


def test_maps_of_one_source_are_one_map() -> None:
    # tokens and a map of tokens: only the combinations that occur are output values.
    half = rasp.Map(lambda w: len(w) // 2, rasp.tokens)
    same = rasp.SequenceMap(lambda w, h: w[:h] == w[: -h - 1 : -1], rasp.tokens, half)
    kept = rasp.SequenceMap(lambda w, ok: w if ok else None, rasp.tokens, same)
    model = compile_sop(kept, ["ab", "aba", "abba"], 3)
    assert model.metadata["output"]["values"] == [None, "aba", "abba"]
    assert run_compiled(model, [["ab", "aba", "abba"]]) == [[None, "aba", "abba"]]


def test_a_sort_by_distinct_keys_copies_its_values() -> None:
    # tracr's make_sort: keys x + i / N never repeat, so each position takes exactly one value.
    program = lib.make_sort(rasp.tokens, rasp.tokens, max_seq_len=8, min_key=1)
    graph = resolve(to_sops(program), [1, 2, 3], 8)
    assert any(getattr(n, "text", "") == "numbers as tokens" for n in sops.walk(graph))
    model = compile_sop(program, [1, 2, 3], 8)
    inputs = [[3, 1, 2, 1], [2, 2], [1]]
    assert run_compiled(model, inputs) == [program(xs) for xs in inputs]
    # Repeated keys (the tokens themselves): ranks repeat, and the aggregate may average.
    ties = lib.make_sort_unique(rasp.tokens, rasp.tokens)
    tie_graph = resolve(to_sops(ties), [1, 2, 3], 4)
    assert not any(getattr(n, "text", "") == "numbers as tokens" for n in sops.walk(tie_graph))
    assert ties([2, 2, 1]) == [1, 2.0, None]
