"""Aggregates whose keys depend on tokens but whose values are bounded per length (`indices`):
a relation per length (compiler.means), so maps with `length` see only pairs that occur."""

from __future__ import annotations

import itertools

import pytest
from test_compile import all_inputs, check_inputs, random_inputs

from compiler import compile_sop
from compiler.graph import build_graph
from compiler.values import infer_values
from rasp import sops as S
from rasp.errors import CompileError
from tests.compiler.test_total_orders import _program

MEAN = "v0 = aggregate(not select(tokens, tokens, <=), indices, 1);\n"


def _analysed(text: str, vocab: str, n: int):
    root = _program(text)
    graph = build_graph(root)
    return root, graph, infer_values(graph, list(vocab), n)


def _named(graph, name: str) -> int:
    (index,) = [node.index for node in graph.nodes if node.name == name]
    return index


def test_a_mean_of_indices_lies_within_the_positions_of_its_length() -> None:
    """v0 - length <= 0: never v0 = N - 1 at length 1, as when the mean was independent of it."""
    _, graph, vs = _analysed(MEAN + "res = v0 - length;", "abc", 6)
    v0 = vs.relation[_named(graph, "v0")]
    assert v0 is not None
    for (_, n), values in v0.items():
        assert all(v == 1 or 0 <= v <= n - 1 for v in values)
    assert max(vs.values[graph.output.index]) <= 0


@pytest.mark.parametrize(
    "text",
    [
        MEAN + "res = v0 - length;",
        MEAN + "res = length - v0;",
        MEAN + "res = v0 + indices;",
        "res = aggregate(not select(tokens, tokens, <=), indices, 0);",
        # not whole numbers: the bounds hold up to the sum's rounding
        "res = aggregate(select(tokens, tokens, ==), indices / 3, 0);",
        "res = aggregate(select(tokens, tokens, <), indices * 0.1, -1);",
        "res = aggregate(select(tokens, tokens, ==), length - indices, 0);",
        # one number per length: copies of n / 4 sum exactly, of 0.4 not (three average to
        # 0.4000000000000001 at length 4)
        "res = aggregate(select(tokens, tokens, ==), length * 0.25);",
        "res = aggregate(select(tokens, tokens, <), length * 0.1, -1);",
        # one key at most: the source's values at that length, or the default
        'res = aggregate(select(tokens, "a", ==) and select(indices, 0, ==), indices, 5);',
    ],
)
def test_per_length_values_cover_every_evaluated_value(text: str) -> None:
    """Soundness: at every (i, n) the interpreter's value is in the relation's set there."""
    root, graph, vs = _analysed(text, "abc", 5)
    rel = vs.relation[graph.output.index]
    assert rel is not None
    for n in range(1, 6):
        for tokens in itertools.product("abc", repeat=n):
            for i, v in enumerate(S.evaluate(root, list(tokens)).values):
                assert (type(v), v) in {(type(x), x) for x in rel[(i, n)]}, (tokens, i, v)


def test_the_width_of_an_impossible_comparison_with_length_compiles() -> None:
    """Refused before (a relu margin of 3 against a float32 error of 5.01 at N = 4): the select
    read pairs (length, v0 - length) that never occur."""
    text = MEAN + "v1 = v0 - length;\nres = selector_width(select(length, v1, <=));"
    root = _program(text)
    model = compile_sop(root, list("abc"), 4)
    assert model.metadata["config"]["n_layers"] <= 2
    inputs = all_inputs("abc", 4)
    assert check_inputs(model, root, inputs) == len(inputs)


def test_a_map_past_the_table_limit_per_position_takes_the_product_instead() -> None:
    """v0's sets per length beside `indices` make 16M combinations at N = 48, its whole set
    beside 0..47 a few hundred thousand: the map is analysed over the product (no relation)."""
    _, graph, vs = _analysed(MEAN + "res = v0 + indices;", "abc", 48)
    assert vs.relation[_named(graph, "v0")] is not None
    assert vs.relation[graph.output.index] is None
    assert max(vs.values[graph.output.index]) == 47 + 47


# -- positional selectors over s-ops known exactly at every position: one mean per (i, n) ---------


@pytest.mark.parametrize(
    "text",
    [
        "res = aggregate(select(length, length, <=), indices);",
        "res = aggregate(select(indices, indices, <=), indices);",
        "res = aggregate(select(indices, indices, >), indices, -1);",
        "res = aggregate(select(1, 1, ==), indicator(indices == 0));",
        # floats: summed in key order, as the interpreter does
        "res = aggregate(select(indices, indices, <=), indices * 0.1);",
        "res = aggregate(select(indices, indices, !=), indices / 3, 0);",
        # ints and floats in one column: every value a float
        "res = aggregate(select(indices, 2, <=), 0.5 if indices == 0 else indices);",
        # keys chosen by tokens alike at every input (every token is <= "c")
        'v1 = aggregate(select(tokens, "c", <=), indices);\nres = v1 - length;',
    ],
)
def test_a_decided_mean_of_exact_values_is_one_value_and_the_interpreters(text: str) -> None:
    """Soundness over every input up to length 5, and exactness: one value per (i, n) (before,
    any mean of w values of the source's whole set: 0..3 in halves at length 2)."""
    root, graph, vs = _analysed(text, "abc", 5)
    rel = vs.relation[graph.output.index]
    assert rel is not None
    assert all(len(values) == 1 for values in rel.values())
    for n in range(1, 6):
        for tokens in itertools.product("abc", repeat=n):
            for i, v in enumerate(S.evaluate(root, list(tokens)).values):
                assert (type(v), v) in {(type(x), x) for x in rel[(i, n)]}, (tokens, i, v)


def test_the_mean_of_every_index_is_half_the_last() -> None:
    _, graph, vs = _analysed("res = aggregate(select(length, length, <=), indices);", "abc", 6)
    rel = vs.relation[graph.output.index]
    assert rel is not None
    assert all(values == ((n - 1) / 2,) for (_, n), values in rel.items())


FUZZ_12101 = (
    "v0 = aggregate(select(length, length, <=), indices);\n"
    'v1 = aggregate(select(tokens, "c", <=), length);\n'
    "v2 = v0 - v1;\n"
    "res = selector_width((select(v1, v2, !=) and not select(v2, v2, ==)) or "
    "select(v2, v2, !=));"
)


def test_a_width_of_a_mean_of_every_index_is_a_constant() -> None:
    """Fuzz program 12101, refused at N = 6 (a relu margin of 3 against a float32 error of 4.3e44:
    v2 = -(n + 1) / 2 was read as any of 0..N-1's means minus n, so the width head compared a
    many-valued number). v2 is one value per length: the selector selects no key, the width is 0."""
    root = _program(FUZZ_12101)
    graph = build_graph(root)
    vs = infer_values(graph, list("abc"), 6)
    assert vs.values[graph.output.index] == (0,)
    model = compile_sop(root, list("abc"), 6)
    assert model.metadata["config"]["n_heads"] == 0 or model.metadata["config"]["n_layers"] <= 1
    inputs = all_inputs("abc", 6)
    assert check_inputs(model, root, inputs) == len(inputs)


def test_two_numbers_from_a_mean_leave_the_model_as_one_logit() -> None:
    """A map of a mean with two values (`round` of a share: 0 or 1) leaves the model as one logit,
    as with more values, not as a one-hot an MLP decodes the mean to (764 parameters before, 553
    now at N = 5; twins156 kept its 274 once its mean had two values)."""
    text = 'res = round(aggregate(select(tokens, tokens, ==), indicator(tokens == "a")));'
    root = _program(text)
    model = compile_sop(root, list("abc"), 5)
    assert model.metadata["output"]["encoding"] == "numerical"
    assert model.metadata["config"]["d_mlp"] == 1
    inputs = all_inputs("abc", 5)
    assert check_inputs(model, root, inputs) == len(inputs)


# -- s-ops of the length alone: at length n every key holds one number -----------------------------

QUARTER = "res = aggregate(select(tokens, tokens, ==), length * 0.25);"


@pytest.mark.parametrize(
    ("text", "at", "default"),
    [
        (QUARTER, lambda n: n * 0.25, 0),
        (
            "res = aggregate(select(tokens, tokens, <), 1.5 * length - 0.5, -1);",
            lambda n: 1.5 * n - 0.5,
            -1,
        ),
    ],
)
def test_a_mean_of_one_exact_number_per_length_is_that_number(text: str, at, default) -> None:
    """Copies of n / 4 sum exactly in float64 (`means.sums_exact`), as whole numbers do: the mean
    is the number itself at every (i, n). Before, only whole numbers were: the aggregate was every
    mean of 0.25..32 over up to 128 keys, refused at N = 128 (more than 100,000 values)."""
    _, graph, vs = _analysed(text, "abc", 128)
    rel = vs.relation[graph.output.index]
    assert rel is not None
    for (_, n), values in rel.items():
        assert at(n) in values and set(values) <= {at(n), default}


def test_a_mean_of_a_number_per_length_whose_copies_sum_inexactly_is_refused_located() -> None:
    """`length * 0.1`: copies of 0.4 average to 0.4000000000000001, so the mean is not the number;
    every mean of 0.1..3.2 over up to 32 keys is too many values: refused at the aggregate."""
    text = "res = aggregate(select(tokens, tokens, ==), length * 0.1);"
    with pytest.raises(CompileError) as refused:
        _analysed(text, "abc", 32)
    (problem,) = refused.value.diagnostics
    assert "can take more than 100000 values" in problem.message
    assert problem.span is not None and (problem.span.line, problem.span.col) == (1, 7)


@pytest.mark.exactness
def test_a_mean_of_quarter_lengths_compiles_at_n_128_and_is_exact() -> None:
    """Refused at N = 128 before (every mean of 0.25..32: too many values); 11,155 parameters now."""
    text = "m = aggregate(select(tokens, tokens, <), length * 0.25);\nres = m * 4 - length;"
    root = _program(text)
    model = compile_sop(root, list("abc"), 128)
    assert model.param_count() < 15_000
    inputs = all_inputs("abc", 4) + random_inputs("abc", 128, 60, seed=128)
    inputs += [["a"] * 128, list("abc" * 42 + "ab")]
    assert check_inputs(model, root, inputs) == len(inputs)
