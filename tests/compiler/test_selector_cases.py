"""Selectors whose sides' values decide what they select (compiler.selector_cases): widths and
aggregates of selectors that select no key, or every key, and what the compiler builds for an
s-op of one value (compiler.constants)."""

from __future__ import annotations

import itertools
from functools import partial

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_compile import all_inputs, check_inputs

from compiler import compile_sop
from compiler.graph import Op, graph_and_index
from compiler.selector_cases import (
    SelectorCases,
    _compared,
    checked_compare_table,
    compare_matrix,
    decided_matrix,
    row_ranges,
    safe_compare,
)
from compiler.values import infer_values
from rasp import sops as S
from rasp.errors import RaspError
from tests.compiler.test_total_orders import _program

MEAN = "v0 = aggregate(not select(tokens, tokens, <=), indices, 1);\nv1 = v0 - length;\n"
NEVER = MEAN + "res = selector_width(select(length, v1, <=));"
EVERY = MEAN + "res = selector_width(select(indices, indices, <=) or select(length, v1, >));"
DEFAULT = MEAN + 'res = aggregate(select(length, v1, <=), tokens, "z");'
# length 1 <= v0 where v0 is the default 1 at length 1 only: a width of 0..1 there, 0 elsewhere
MIXED = (
    "v0 = aggregate(not select(tokens, tokens, <=), indices, 1);\n"
    "res = selector_width(select(length, v0, <=));"
)

SOUND = [
    NEVER,
    EVERY,
    DEFAULT,
    MIXED,
    MEAN + "res = aggregate(select(length, v1, <=), indices, 0) + indices;",
    MEAN + 'res = selector_width(not select(length, v1, <=) and select(tokens, "a", ==));',
    MEAN + "res = aggregate(select(v1, length, <) or select(tokens, tokens, ==), indices, 0);",
    MEAN + "res = selector_width(select(v1, v0, !=));",
    MEAN + 'res = selector_width(select(length, v1 + 4, <=) and select(tokens, "a", ==));',
    MEAN + "res = selector_width(select(v0, v0, ==) and select(indices, length, <));",
    'res = selector_width(select(indices, length, >=) or select(tokens, "a", ==));',
    'res = aggregate(select(indices, length, >=) and select(tokens, "a", ==), tokens, "z");',
    'res = selector_width(select(tokens, "a", ==) and select(tokens, "b", ==));',
    # strings: compared pair by pair
    'x = aggregate(select(tokens, "a", ==), tokens, "q");\n'
    'res = selector_width(select(x, "z", >) or select(tokens, "a", ==));',
    # a mean of fractions: its bounds hold up to the sum's rounding
    "m = aggregate(select(tokens, tokens, <), indices / 3, 0);\n"
    "res = selector_width(select(m, length, >=));",
    # maps that read tokens but are one value per position (a relation: map_values) or not
    'v = length if tokens > "a" else length;\n'
    "res = aggregate(select(v, v, !=) and select(tokens, tokens, >), v, 1);",
    'v = (indices if tokens == "a" else indices) + 1;\nres = selector_width(select(v, length, <));',
    'v = length if tokens == "a" else indices;\nres = selector_width(select(v, v, !=));',
    # one key s-op against one query s-op throughout: the formula over each pair of values
    MEAN + "res = selector_width(select(v0, v0, !=) and select(v0, v0, ==));",
    MEAN + "res = aggregate(select(v1, v0, <) or select(v1, v0, >=), indices, 0);",
    MEAN + "res = selector_width(not (select(v0, v1, <) and not select(v0, v1, <=)));",
    MEAN + "res = selector_width((select(v0, v0, <) or select(v0, v0, >)) and select(v0, v0, ==));",
    # a pair `<` cannot order fails the input although `==` compares it
    'v = indices if tokens == "a" else tokens;\n'
    "res = selector_width(select(v, v, ==) or select(v, v, <));",
]


def _analysed(text: str, n: int):
    root = _program(text)
    graph, index = graph_and_index(root)
    return root, graph, index, infer_values(graph, list("abc"), n)


@pytest.mark.parametrize("text", SOUND)
def test_cases_and_values_cover_every_evaluation(text: str) -> None:
    """Soundness: on every input of length 1..5, each selector selects every key it must and
    none it cannot, and each s-op's value is among its values at (i, n)."""
    _check_sound(text, 5)


SIDES = [
    "v0",
    "indices",
    "tokens",
    'indices if tokens == "a" else tokens',
    'aggregate(select(indices, indices, <=), indicator(tokens == "a"))',
]
OPS = ["==", "!=", "<", "<=", ">", ">="]


@st.composite
def _formulas(draw: st.DrawFn, depth: int = 0) -> str:
    if depth == 2 or draw(st.booleans()):
        return f"select(k, q, {draw(st.sampled_from(OPS))})"
    kind = draw(st.sampled_from(["not", "and", "or"]))
    if kind == "not":
        return f"not ({draw(_formulas(depth + 1))})"
    return f"({draw(_formulas(depth + 1))}) {kind} ({draw(_formulas(depth + 1))})"


@given(st.sampled_from(SIDES), st.sampled_from(SIDES), _formulas(), st.booleans())
@settings(max_examples=100, deadline=None)
def test_formulas_over_one_pair_of_sides_are_sound(
    key: str, query: str, formula: str, width: bool
) -> None:
    """Joint cases (a formula of selects over one key and one query s-op), on every input of
    length 1..4."""
    out = "selector_width(s)" if width else "aggregate(s, indices, 0)"
    text = f"{MEAN}k = {key};\nq = {query};\ns = {formula};\nres = {out};"
    try:
        _check_sound(text, 4)
    except RaspError:
        pass  # the analysis refused the program (every input fails): nothing to cover


def _check_sound(text: str, max_len: int) -> None:
    root, graph, index, vs = _analysed(text, max_len)
    cases = SelectorCases(graph, vs.relation, vs.values)
    nodes = {index[node.id]: node for node in S.walk(root)}
    for n in range(1, max_len + 1):
        at = {k: cases.at(k, n) for k in nodes if graph[k].op.is_selector}
        for tokens in itertools.product("abc", repeat=n):
            ev = S.Evaluator(list(tokens))
            try:
                ev.seq(root)
            except RaspError:
                continue  # no promise where the interpreter fails
            for k, node in nodes.items():
                if graph[k].op.is_selector:
                    m = ev.matrix(node)
                    if at[k] is not None:
                        can, must = (np.broadcast_to(c, (n, n)) for c in at[k])
                        assert not (m & ~can).any() and not (must & ~m).any(), (k, tokens)
                    continue
                rel = vs.relation[k]
                for i, v in enumerate(ev.seq(node).values):
                    allowed = vs.values[k] if rel is None else rel[(i, n)]
                    assert (type(v), v) in {(type(x), x) for x in allowed}, (k, tokens, i, v)


def test_a_select_that_never_holds_has_width_zero() -> None:
    _, graph, _, vs = _analysed(NEVER, 8)
    assert vs.values[graph.output.index] == (0,)


def test_a_select_of_every_key_has_the_length_as_width() -> None:
    _, graph, _, vs = _analysed(EVERY, 8)
    rel = vs.relation[graph.output.index]
    assert rel is not None and all(vals == (n,) for (_, n), vals in rel.items())


def test_an_aggregate_of_no_key_is_its_default() -> None:
    _, graph, _, vs = _analysed(DEFAULT, 8)
    assert vs.values[graph.output.index] == ("z",)


def test_a_select_decided_at_some_rows_narrows_them_only() -> None:
    """At length 1 the key may be selected, at every other length none is: at most one key (the
    width 0..1, 0..N before)."""
    _, graph, _, vs = _analysed(MIXED, 8)
    assert vs.values[graph.output.index] == (0, 1)
    assert vs.at_most_one[graph.output.inputs[0]]
    # v1 + 4 <= 3 from length 2 on: lengths 1..3 may select keys, the others none
    text = MEAN + 'res = selector_width(select(length, v1 + 4, <=) and select(tokens, "a", ==));'
    _, graph, _, vs = _analysed(text, 8)
    rel = vs.relation[graph.output.index]
    assert rel is not None and rel[(0, 3)] == (0, 1, 2, 3)
    assert all(vals == (0,) for (_, n), vals in rel.items() if n > 3)


def test_positions_against_the_length() -> None:
    """select(indices, length, >=) never holds (a position is below the length), `<` always."""
    root = _program(
        "res = selector_width(select(indices, length, >=) or select(indices, length, <));"
    )
    graph, _ = graph_and_index(root)
    vs = infer_values(graph, list("ab"), 4)
    cases = SelectorCases(graph, vs.relation, vs.values)
    never, every = (k for k in range(len(graph)) if graph[k].op is Op.SELECT)
    for n in range(1, 5):
        assert not decided_matrix(cases.at(never, n), n).any()
        assert decided_matrix(cases.at(every, n), n).all()


def test_unknown_sides_decide_nothing() -> None:
    root = _program('res = selector_width(select(tokens, "a", ==));')
    graph, _ = graph_and_index(root)
    vs = infer_values(graph, list("ab"), 4)
    sel = next(k for k in range(len(graph)) if graph[k].op is Op.SELECT)
    cases = SelectorCases(graph, vs.relation, vs.values)
    lo, hi = row_ranges(cases.at(sel, 3), 3)
    assert lo.tolist() == [0, 0, 0] and hi.tolist() == [3, 3, 3]
    assert vs.values[graph.output.index] == tuple(range(5))


@pytest.mark.parametrize("n", [4, 8, 32])
def test_a_width_that_is_always_zero_is_a_constant(n: int) -> None:
    """6,831 parameters at N = 4, 3,466 at 8, 21,514 at 32 before: a width head over 0..N."""
    root = _program(NEVER)
    model = compile_sop(root, list("abc"), n)
    assert model.param_count() < 100
    if n <= 8:
        inputs = all_inputs("abc", min(n, 5))
        assert check_inputs(model, root, inputs) == len(inputs)


def test_an_aggregate_of_no_key_compiles_to_its_default() -> None:
    root = _program(DEFAULT)
    model = compile_sop(root, list("abc"), 8)
    assert model.param_count() < 100  # 3,061 before
    inputs = all_inputs("abc", 5)
    assert check_inputs(model, root, inputs) == len(inputs)


def _without_tokens(metadata: dict) -> tuple[list[dict], int]:
    """Each layer's heads and widths, and the residual's width but the token one-hot's."""
    labels = [label for label in metadata["residual"] if not label.startswith("tokens:")]
    return metadata["config"]["layers"], len(labels)


@pytest.mark.parametrize(
    "text",
    [EVERY, "res = selector_width(select(indices, length, <));"],
)
def test_a_width_of_every_key_is_the_length(text: str) -> None:
    """One head, as `length`: 4,066 parameters in 2 layers at N = 8 before for `<`, 3,508 in 2
    for the disjunction (refused at N = 4). (`length` never mentions the tokens, so its residual
    has no token one-hot; a program that mentions them keeps it: compared without it.)"""
    root = _program(text)
    length = compile_sop(_program("res = length;"), list("abc"), 8)
    for n in (4, 8):
        model = compile_sop(root, list("abc"), n)
        assert model.metadata["config"]["n_layers"] == 1
        if n == 8:
            assert _without_tokens(model.metadata) == _without_tokens(length.metadata)
        inputs = all_inputs("abc", min(n, 5))
        assert check_inputs(model, root, inputs) == len(inputs)


def test_a_width_decided_at_some_lengths_compiles_smaller() -> None:
    """5,763 parameters at N = 8 before (its values 0..8 where they are 0..1)."""
    root = _program(MIXED)
    model = compile_sop(root, list("abc"), 8)
    assert model.param_count() < 5_763
    inputs = all_inputs("abc", 5)
    assert check_inputs(model, root, inputs) == len(inputs)


def test_a_checked_comparison_fails_where_a_side_raises() -> None:
    keys = [(True, 1), (False, None), (True, "a")]
    queries = [(True, 2), (False, None)]
    lt = partial(safe_compare, S.Comparison.LT)
    table = checked_compare_table(lt, keys, queries)  # [query, key]: key < query
    assert table.tolist() == [[True, False, False], [False, False, False]]


# An or of selects whose query side is a joint reading of (tokens, indices class, v3), v3 a mean
# of indices with 19 values at N = 4 (fuzz seed 18283, a mean of means there: 585 values and
# 160 s at N = 6, where most of the time went to evaluating the formula once per pair of the
# sides' 1,755 tuples).
JOINT_OR = """
v3 = aggregate(select(tokens, tokens, >), indices);
res = aggregate((select(tokens, tokens, <) and not select(indices, 2, >)) or select(v3, v3, !=),
                indicator(not (tokens == "b")));
"""  # (`not tokens == "b"` is `(not tokens) == "b"`, zero everywhere: now compiled as a constant)


def test_a_selector_over_joint_sides_is_exact() -> None:
    root = _program(JOINT_OR)
    model = compile_sop(root, list("abc"), 4)
    ops = [op["op"] for layer in model.metadata["layers"] for op in layer["mlp"]]
    assert any(op.startswith("joint (tokens,") for op in ops)  # the path under test
    inputs = all_inputs("abc", 4)
    assert check_inputs(model, root, inputs) == len(inputs)


COMPLEMENTARY = 'x = aggregate(select(indices, indices, <=), indicator(tokens == "a"));\n'


@pytest.mark.parametrize(
    "text",
    [
        COMPLEMENTARY + "res = selector_width(select(x, x, !=) and select(x, x, ==));",
        COMPLEMENTARY + "res = aggregate(select(x, x, !=) and select(x, x, ==), indices, 0);",
        COMPLEMENTARY + 'res = aggregate(select(x, x, <) and not select(x, x, <=), tokens, "q");',
    ],
)
def test_selects_that_contradict_each_other_compile_to_a_constant(text: str) -> None:
    """Their sides' cases pair values independently (some pair is `!=`, another `==`), so the
    conjunction seemed to select keys: 13,259, 12,442 and 8,273 parameters in 2 layers at
    N = 8 before, a head over the mean `x`'s 23 values."""
    root = _program(text)
    graph, _ = graph_and_index(root)
    vs = infer_values(graph, list("abc"), 8)
    assert len(vs.values[graph.output.index]) == 1
    model = compile_sop(root, list("abc"), 8)
    assert model.param_count() < 100
    inputs = all_inputs("abc", 5)
    assert check_inputs(model, root, inputs) == len(inputs)


ATOMS = st.one_of(
    st.integers(-3, 3),
    st.sampled_from([2**60, 2**60 + 1, -(2**55)]),
    st.floats(-3, 3, allow_nan=False, width=64),
    st.sampled_from([float("nan"), float("inf"), 2.0**60]),
    st.booleans(),
    st.sampled_from(["a", "b", "ab", "", "a\x00", "\x00"]),  # numpy's strs drop trailing NULs
    st.none(),
)


@given(st.lists(ATOMS, max_size=5), st.lists(ATOMS, max_size=5))
@settings(max_examples=300, deadline=None)
def test_joint_pairs_compare_as_python_does(keys: list, queries: list) -> None:
    """The joint cases' vectorised comparison against Python's, pair by pair: whether a pair
    holds, and whether it compares at all (a string ordered against a number raises)."""
    for comparison in S.Comparison:
        holds, ok = _compared(comparison, keys, queries)
        for r, q in enumerate(queries):
            for c, k in enumerate(keys):
                try:
                    expected = comparison.apply(k, q)
                except TypeError:
                    assert not ok[r, c], (comparison, k, q)
                    continue
                assert ok[r, c] and holds[r, c] == expected, (comparison, k, q)
        assert (compare_matrix(comparison, keys, queries) == (holds & ok)).all()


def test_strings_are_compared_at_once_as_python_orders_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every side a string, a trailing NUL (which numpy's strs drop) and non-ASCII included, is
    compared by rank in Python's order, not pair by pair (sort over 9,000 tokens compares two
    81M-pair tables per build)."""
    values = ["a", "a\x00", "\x00", "", "b", "ab", "é", "\U0001f600", "B"]
    expected = {
        c: np.array([[c.apply(k, q) for k in values] for q in values[::-1]]) for c in S.Comparison
    }

    def pair_by_pair(*args: object) -> bool:
        raise AssertionError("compared pair by pair")

    monkeypatch.setattr(S.Comparison, "apply", pair_by_pair)
    for comparison in S.Comparison:
        holds = compare_matrix(comparison, values, values[::-1])
        assert (holds == expected[comparison]).all(), comparison
