"""What `rasp.sops` gained for programs lowered from tracr: None, loose types, Python predicates and
tracr's mean. A RASP program never meets any of them, and its semantics are unchanged."""

from __future__ import annotations

import pytest

from rasp.errors import RaspRuntimeError
from rasp.sops import (
    AggregateSOp,
    Comparison,
    ConstSOp,
    IndicesSOp,
    MapSOp,
    PredicateSelect,
    Select,
    SelectorWidthSOp,
    SeqType,
    TokensSOp,
    evaluate,
    make_seq,
)


def _shift(values: AggregateSOp | TokensSOp | MapSOp, default: object = None) -> AggregateSOp:
    idx = IndicesSOp()
    prev = Select(keys=MapSOp(fn=lambda i: i + 1, inputs=(idx,)), queries=idx)
    return AggregateSOp(selector=prev, sop=values, default=default)  # type: ignore[arg-type]


def test_none_mixes_with_any_type_and_keeps_the_label() -> None:
    assert make_seq([None, 1, 2]).type is SeqType.INTS
    assert make_seq([None, "a"]).type is SeqType.STRINGS
    assert make_seq([None, None]).type is SeqType.NONE
    out = evaluate(_shift(TokensSOp()), "abc")
    assert out.values == (None, "a", "b")


def test_mixed_types_need_a_loose_node() -> None:
    with pytest.raises(RaspRuntimeError, match="different types"):
        make_seq([1, "a"])
    assert make_seq([1, "a"], loose=True).type is SeqType.STRINGS
    mixed = MapSOp(fn=lambda t: 1 if t == "a" else t, inputs=(TokensSOp(),), loose=True)
    assert evaluate(mixed, "ab").values == (1, "b")


def test_comparing_none_in_a_select() -> None:
    shifted = _shift(TokensSOp())
    eq = Select(keys=shifted, queries=TokensSOp(), comparison=Comparison.EQ)
    assert evaluate(eq, "aa").tolist() == [[False, True], [False, True]]
    lt = Select(keys=shifted, queries=TokensSOp(), comparison=Comparison.LT)
    with pytest.raises(RaspRuntimeError, match="'<' not supported"):
        evaluate(lt, "ab")


def test_predicate_select_calls_key_then_query() -> None:
    idx = IndicesSOp()
    offset_one = PredicateSelect(keys=idx, queries=idx, fn=lambda k, q: q == k + 1)
    assert evaluate(offset_one, "abc").tolist() == [
        [False, False, False],
        [True, False, False],
        [False, True, False],
    ]
    assert evaluate(SelectorWidthSOp(selector=offset_one), "abc").values == (0, 1, 1)


def test_a_failing_predicate_is_a_located_runtime_error() -> None:
    bad = PredicateSelect(keys=TokensSOp(), queries=TokensSOp(), fn=lambda k, q: k.missing)
    with pytest.raises(RaspRuntimeError, match="the selector failed on key 'a', query 'a'"):
        evaluate(bad, "a")


def test_tracr_mean_averages_bools_and_keeps_a_single_value() -> None:
    idx = IndicesSOp()
    prevs = Select(keys=idx, queries=idx, comparison=Comparison.LEQ)
    is_x = MapSOp(fn=lambda t: t == "x", inputs=(TokensSOp(),))
    tracr_mean = AggregateSOp(selector=prevs, sop=is_x, default=0, bools_as_numbers=True)
    assert evaluate(tracr_mean, "xax").values == (True, 0.5, 2 / 3)
    rasp_mean = AggregateSOp(selector=prevs, sop=is_x, default=0)
    with pytest.raises(RaspRuntimeError, match="non-numbers"):
        evaluate(rasp_mean, "xax")


def test_averaging_none_is_an_error() -> None:
    everything = Select(keys=ConstSOp(value=0), queries=ConstSOp(value=0))
    shifted = _shift(MapSOp(fn=lambda i: i * 2, inputs=(IndicesSOp(),)))
    mean = AggregateSOp(selector=everything, sop=shifted, default=0, bools_as_numbers=True)
    with pytest.raises(RaspRuntimeError, match="non-numbers"):
        evaluate(mean, "ab")
