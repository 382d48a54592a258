"""A selector width's value set holds every width the interpreter computes (per position where the
analysis has a relation), and 0 is left out only where every query selects a key on every input
(`ValueSets.never_empty`, 5744af6): random selects over s-ops that depend on tokens, positions,
the length and earlier widths and aggregates, against every input up to the length."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.graph import build_graph
from compiler.values import infer_values
from rasp import sops as S
from rasp.errors import CompileError, RaspError
from rasp.interpreter import Interpreter
from rasp.parser import parse

VOCAB = list("ab")
SIDES = [
    "tokens", "indices", "length", "length - indices - 1", "indices + 1", "indices - 1", "0",
    "1", "2", "-1", '"a"', "length - 1", "length - 2", "indices % 2", 'tokens == "a"',
    "selector_width(select(tokens, tokens, ==))",
    "length - selector_width(select(tokens, tokens, ==))",
    "selector_width(select(indices, indices, <))",
    'aggregate(select(indices, length - indices - 1, ==), tokens, "b")',
    "aggregate(select(indices, indices - 1, ==), indices, 0)",
    "aggregate(select(tokens, tokens, ==), indices, 0)",
]  # fmt: skip
COMPARISONS = ["==", "<", "<=", ">", ">=", "!=", "TRUE", "FALSE"]


@st.composite
def selectors(draw: st.DrawFn, depth: int = 0) -> str:
    keys, queries = draw(st.sampled_from(SIDES)), draw(st.sampled_from(SIDES))
    text = f"select({keys}, {queries}, {draw(st.sampled_from(COMPARISONS))})"
    joint = draw(st.sampled_from(["", "", "and", "or", "not"] if depth < 1 else [""]))
    if joint == "not":
        return f"(not {text})"
    if joint:
        return f"({text} {joint} {draw(selectors(depth + 1))})"
    return text


@settings(max_examples=150, deadline=None)
@given(selector=selectors(), n=st.integers(1, 4))
def test_width_sets_hold_the_interpreters_widths(selector: str, n: int) -> None:
    try:
        interp = Interpreter()
        interp.exec_program(parse(f"res = selector_width({selector});", "<test>"))
        root = interp.get("res")
        graph = build_graph(root)
        sets = infer_values(graph, VOCAB, n)
    except (RaspError, CompileError):
        return  # a comparison the interpreter refuses, or a program refused as a whole
    node = graph.nodes[graph.root]
    values, relation = set(sets.values[node.index]), sets.relation[node.index]
    never_empty = sets.never_empty[node.inputs[0]]
    for tokens in (list(t) for k in range(1, n + 1) for t in itertools.product(VOCAB, repeat=k)):
        try:
            widths = S.evaluate(root, tokens).values
        except RaspError:
            continue  # the interpreter fails on this input: no promise
        for i, width in enumerate(widths):
            assert width in values, (tokens, i)
            if relation is not None:
                assert width in relation[(i, len(tokens))], (tokens, i)
            assert not (never_empty and width == 0), (tokens, i)
