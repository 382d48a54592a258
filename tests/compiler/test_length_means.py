"""Aggregates whose keys depend on tokens but whose values are bounded per length (`indices`):
a relation per length (compiler.means), so maps with `length` see only pairs that occur."""

from __future__ import annotations

import itertools

import pytest
from test_compile import all_inputs, check_inputs

from compiler import compile_sop
from compiler.graph import build_graph
from compiler.values import infer_values
from rasp import sops as S
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
