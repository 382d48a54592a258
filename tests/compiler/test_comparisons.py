"""Comparisons of two numbers without their pairs (compiler.comparisons): which of True and False
occur, from the sets' extremes, for the value analysis past its table limit."""

from __future__ import annotations

import itertools
import operator

import pytest
from hypothesis import given
from hypothesis import strategies as st

import compiler.map_values
from compiler.comparisons import comparison_of, finite_numbers, outcomes
from compiler.graph import build_graph
from compiler.values import infer_values
from rasp.errors import Source
from rasp.interpreter import load_source

OPERATORS = [operator.gt, operator.ge, operator.lt, operator.le, operator.eq, operator.ne]
NUMBERS = st.one_of(
    st.integers(-4, 4), st.sampled_from([-1.5, -0.5, 0.0, 0.25, 0.5, 1.0, 2.0, 1 / 3, 2 / 3])
)


@given(
    op=st.sampled_from(OPERATORS),
    a=st.lists(NUMBERS, min_size=1, max_size=6),
    b=st.lists(NUMBERS, min_size=1, max_size=6),
)
def test_outcomes_are_those_of_every_pair(op, a, b) -> None:
    every = {op(x, y) for x, y in itertools.product(a, b)}
    assert outcomes(op, a, b) == sorted(every)


def test_only_comparisons_of_two_finite_numbers() -> None:
    sop = load_source(Source("<t>", "x = indices + 1; y = indices > x; z = indices > 2;")).get("y")
    graph = build_graph(sop)
    (node,) = [n for n in graph.nodes if n.name == "y"]
    assert comparison_of(node.fn) is operator.gt
    plus = [n for n in graph.nodes if n.name == "x"][0]
    assert comparison_of(plus.fn) is None
    assert finite_numbers([0, 1.5, -(2**52)]) and not finite_numbers([True])
    assert not finite_numbers([float("inf")]) and not finite_numbers([2**53])


PROGRAM = """
prefix = select(indices, indices, <=);
f = aggregate(prefix, indicator(tokens == "a"));
g = aggregate(prefix, indicator(tokens == "b"));
h = aggregate(select(tokens, tokens, ==), indicator(indices == 0));
"""


@pytest.mark.parametrize("expr", ["f > g", "f <= g", "f == g", "f != h", "h < f", "g >= h"])
def test_past_the_table_limit_the_analysis_agrees_with_the_enumeration(
    expr: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    sop = load_source(Source("<t>", PROGRAM + f"res = {expr};")).get("res")
    graph = build_graph(sop)
    listed = infer_values(graph, ["a", "b", "c"], 8)
    monkeypatch.setattr(compiler.map_values, "MAX_MAP_COMBINATIONS", 10)
    extremes = infer_values(graph, ["a", "b", "c"], 8)
    (node,) = [n for n in graph.nodes if n.name == "res"]
    assert extremes.values[node.index] == listed.values[node.index]
    assert extremes.relation[node.index] == listed.relation[node.index]
