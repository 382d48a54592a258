"""The lazy s-op graph and its vectorised evaluator, independent of the parser."""

from __future__ import annotations

import numpy as np
import pytest

from rasp.errors import RaspRuntimeError
from rasp.sops import (
    AggregateSOp,
    Comparison,
    ConstSOp,
    IndicesSOp,
    LengthSOp,
    MapSOp,
    Select,
    SelectAnd,
    SelectNot,
    SelectOr,
    SelectorWidthSOp,
    SeqType,
    TokenKind,
    TokensSOp,
    evaluate,
    make_seq,
    sum_in_order,
    walk,
)


def test_select_orientation_is_key_op_query() -> None:
    # Query i selects key j iff key[j] < query[i]: strictly earlier positions.
    prevs = Select(keys=IndicesSOp(), queries=IndicesSOp(), comparison=Comparison.LT)
    m = evaluate(prevs, "abc")
    assert m.tolist() == [[False, False, False], [True, False, False], [True, True, False]]


def test_reverse() -> None:
    opp = MapSOp(fn=lambda n, i: n - i - 1, inputs=(LengthSOp(), IndicesSOp()))
    rev = AggregateSOp(selector=Select(keys=IndicesSOp(), queries=opp), sop=TokensSOp())
    assert evaluate(rev, "hello").values == ("o", "l", "l", "e", "h")


def test_aggregate_three_cases() -> None:
    idx = IndicesSOp()
    # Query 0 selects nothing (default), query 1 selects key 0 (pass-through int), query 2 two keys (mean).
    sel = Select(keys=idx, queries=idx, comparison=Comparison.LT)
    out = evaluate(
        AggregateSOp(selector=sel, sop=MapSOp(fn=lambda i: i * 2 + 1, inputs=(idx,)), default=7),
        "abc",
    )
    assert out.values == (7, 1, 2.0)
    assert isinstance(out.values[1], int) and isinstance(out.values[2], float)
    assert out.type is SeqType.FLOATS


def _mean_of_all(sop: MapSOp | TokensSOp, tokens: list) -> tuple:
    full = Select(keys=ConstSOp(value=1), queries=ConstSOp(value=1))
    return evaluate(AggregateSOp(selector=full, sop=sop), tokens).values


def test_a_mean_adds_in_key_order_as_the_original() -> None:
    # The original's `sum(values) * 1.0 / n`: 0.1 + 0.1 + 0.7 + 0.1 is 0.9999999999999999, so the
    # mean is just below 0.25 (a matrix product may add in any order and give 0.25).
    floats = TokensSOp(kind=TokenKind.FLOAT)
    assert _mean_of_all(floats, [0.1, 0.1, 0.7, 0.1]) == (0.24999999999999997,) * 4
    rng = np.random.default_rng(1)
    for _ in range(50):
        xs = [float(x) for x in rng.random(int(rng.integers(2, 40)))]
        total = 0.0
        for x in xs:  # not `sum`: Python 3.12's compensates rounding (see the next test)
            total += x
        assert _mean_of_all(floats, xs) == (total / len(xs),) * len(xs)


def test_a_mean_is_the_same_on_every_python(compensated_sum: None) -> None:
    """Python 3.12's `sum` adds floats with compensation ([0.1] * 10 sums to 1.0 there); a mean
    adds in key order on every Python, in both of the interpreter's paths: the vectorised one and
    the one by rows (tracr's mean; also None or mixed types). `compensated_sum` makes `sum` work
    as on 3.12 here."""
    assert sum([0.1] * 10) == 1.0  # the patch holds
    assert sum_in_order([0.1] * 10) == 0.9999999999999999 and sum_in_order([]) == 0
    assert sum_in_order([-0.0]) == 0.0 and sum_in_order([True, True]) == 2  # as `sum` gives
    floats = TokensSOp(kind=TokenKind.FLOAT)
    everything = Select(keys=ConstSOp(value=1), queries=ConstSOp(value=1))
    tracr_mean = AggregateSOp(selector=everything, sop=floats, bools_as_numbers=True)
    for node in (AggregateSOp(selector=everything, sop=floats), tracr_mean):
        assert evaluate(node, [0.1] * 10).values == (0.9999999999999999 / 10,) * 10


def test_a_mean_of_whole_numbers_past_2_to_the_53_rounds_the_sum_first() -> None:
    big = MapSOp(fn=lambda i: 2**53 + 1, inputs=(IndicesSOp(),))
    # 3 * (2^53 + 1) rounds to a multiple of 4 before the division, as in the original
    assert _mean_of_all(big, list("abc")) == (9007199254740994.0,) * 3
    small = MapSOp(fn=lambda i: 2**40 + i, inputs=(IndicesSOp(),))
    assert _mean_of_all(small, list("abc")) == ((3 * 2**40 + 3) / 3,) * 3


def test_a_select_compares_whole_numbers_past_2_to_the_53_exactly() -> None:
    # numpy compares int64 with float64 as floats: 2^53 + 1 == 2^53.0 there, not in Python
    big = MapSOp(fn=lambda i: 2**53 + 1 + i, inputs=(IndicesSOp(),))
    same = Select(keys=big, queries=ConstSOp(value=float(2**53)), comparison=Comparison.EQ)
    assert not evaluate(same, "ab").any()
    below = Select(keys=big, queries=ConstSOp(value=float(2**53)), comparison=Comparison.GT)
    assert evaluate(below, "ab").all()


def test_a_select_tells_a_trailing_nul_from_its_absence() -> None:
    # numpy's strs drop trailing NULs ("a\x00" == "a" there); Python, the original's semantics,
    # tells them apart, as the compiled model does
    tokens = TokensSOp()
    width = SelectorWidthSOp(selector=Select(keys=tokens, queries=tokens, comparison=Comparison.EQ))
    assert list(evaluate(width, ["a", "a\x00", "a"]).values) == [2, 1, 2]
    before = Select(keys=tokens, queries=tokens, comparison=Comparison.LT)
    assert evaluate(before, ["a", "a\x00"]).tolist() == [[False, False], [True, False]]


def test_averaging_strings_is_an_error() -> None:
    full = Select(keys=ConstSOp(value=1), queries=ConstSOp(value=1))
    with pytest.raises(RaspRuntimeError, match="non-numbers"):
        evaluate(AggregateSOp(selector=full, sop=TokensSOp(), default="x"), "ab")


def test_averaging_identical_bools_is_an_error() -> None:
    full = Select(keys=ConstSOp(value=1), queries=ConstSOp(value=1))
    flags = MapSOp(fn=lambda t: t == "a", inputs=(TokensSOp(),))
    with pytest.raises(RaspRuntimeError, match="non-numbers"):
        evaluate(AggregateSOp(selector=full, sop=flags), "aa")


def test_default_zero_with_strings_mixes_types() -> None:
    # Query 0 selects nothing (default 0), query 1 selects one string.
    prev = Select(keys=IndicesSOp(), queries=MapSOp(fn=lambda i: i - 1, inputs=(IndicesSOp(),)))
    with pytest.raises(RaspRuntimeError, match="different types"):
        evaluate(AggregateSOp(selector=prev, sop=TokensSOp()), "ab")


def test_selector_combinators_and_width() -> None:
    idx = IndicesSOp()
    lt = Select(keys=idx, queries=idx, comparison=Comparison.LT)
    eq = Select(keys=idx, queries=idx, comparison=Comparison.EQ)
    leq = SelectOr(left=lt, right=eq)
    assert evaluate(SelectorWidthSOp(selector=leq), "abcd").values == (1, 2, 3, 4)
    assert evaluate(SelectorWidthSOp(selector=SelectNot(inner=leq)), "abcd").values == (3, 2, 1, 0)
    assert evaluate(SelectorWidthSOp(selector=SelectAnd(left=lt, right=eq)), "abcd").values == (
        0,
        0,
        0,
        0,
    )


def test_string_vs_number_select() -> None:
    eq = Select(keys=TokensSOp(), queries=IndicesSOp(), comparison=Comparison.EQ)
    assert not evaluate(eq, "ab").any()
    lt = Select(keys=TokensSOp(), queries=IndicesSOp(), comparison=Comparison.LT)
    with pytest.raises(RaspRuntimeError, match="not supported"):
        evaluate(lt, "ab")


def test_map_errors_are_located_runtime_errors() -> None:
    div = MapSOp(fn=lambda i: 1 / i, inputs=(IndicesSOp(),))
    with pytest.raises(RaspRuntimeError, match="division by zero"):
        evaluate(div, "ab")
    lookup = MapSOp(fn=lambda t: {"a": 1}[t], inputs=(TokensSOp(),))
    with pytest.raises(RaspRuntimeError, match=r'index \[ "b" \] not in dict'):
        evaluate(lookup, "ab")


def test_token_conversions() -> None:
    assert evaluate(TokensSOp(kind=TokenKind.INT), "123").values == (1, 2, 3)
    assert evaluate(TokensSOp(kind=TokenKind.BOOL), ["", "x"]).values == (False, True)
    with pytest.raises(RaspRuntimeError, match="tokens_int"):
        evaluate(TokensSOp(kind=TokenKind.INT), "ab")


def test_empty_input_refused() -> None:
    with pytest.raises(RaspRuntimeError, match="empty"):
        evaluate(IndicesSOp(), "")


def test_make_seq_types() -> None:
    assert make_seq([1, 2.5]).type is SeqType.FLOATS
    assert make_seq([True, False]).type is SeqType.BOOLS
    # The original's check is isinstance(v, int), which bools pass: bools mix into numbers.
    assert make_seq([True, 1]).type is SeqType.INTS
    assert make_seq([False, 0.5, 2]).type is SeqType.FLOATS
    assert make_seq([True, 1]).values == (True, 1)
    with pytest.raises(RaspRuntimeError):
        make_seq([True, "a"])


def test_walk_is_topological_and_handles_deep_graphs() -> None:
    node = IndicesSOp()
    for _ in range(5000):  # deeper than Python's recursion limit
        node = MapSOp(fn=lambda x: x + 1, inputs=(node,))
    order = list(walk(node))
    assert order[0].children() == () and order[-1] is node
    assert evaluate(node, "ab").values == (5000, 5001)


def test_vectorised_matches_pairwise_definition() -> None:
    rng = np.random.default_rng(0)
    for _ in range(20):
        tokens = list(rng.integers(0, 4, size=int(rng.integers(1, 12))))
        toks = TokensSOp(kind=TokenKind.INT)
        for cmp in Comparison:
            m = evaluate(
                Select(keys=toks, queries=IndicesSOp(), comparison=cmp), [int(t) for t in tokens]
            )
            n = len(tokens)
            expected = [[cmp.apply(int(tokens[j]), i) for j in range(n)] for i in range(n)]
            assert m.tolist() == expected


def test_mixed_types_get_the_hint_of_the_operation_that_mixed_them() -> None:
    # (an input of mixed tokens was once told about an aggregate's default)
    with pytest.raises(RaspRuntimeError) as err:
        evaluate(TokensSOp(kind=TokenKind.ASIS), ["a", 3])
    assert err.value.hint is not None and "input's tokens" in err.value.hint


@pytest.mark.parametrize("tokens", [None, 3, {"a", "b"}, b"ab"])
def test_evaluate_names_an_input_that_is_not_a_sequence(tokens: object) -> None:
    with pytest.raises(TypeError, match="a sequence of tokens .* got "):
        evaluate(IndicesSOp(), tokens)  # type: ignore[arg-type]


def test_evaluate_takes_a_str_a_list_a_tuple_or_an_array() -> None:
    for tokens in ("ab", ["a", "b"], ("a", "b"), np.array(["a", "b"])):
        assert evaluate(IndicesSOp(), tokens).values == (0, 1)
