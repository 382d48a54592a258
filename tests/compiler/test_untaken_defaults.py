"""An aggregate whose selector selects a key for every query of every input never takes its
default (`ValueSets.never_empty`): its value set leaves the default out, and the compiler gives it
a value the aggregate has instead (compiler.constants), so a string default of a mean of numbers
compiles, and a copy has no column for a value it never holds."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import compile_sop
from compiler.graph import build_graph
from compiler.values import infer_values
from rasp import sops as S
from rasp.errors import CompileError, RaspError
from rasp.interpreter import Interpreter
from rasp.parser import parse
from tests.runtime_helpers import run_compiled

VOCAB = list("abc")


def _program(text: str) -> S.Node:
    interp = Interpreter()
    interp.exec_program(parse(text, "<test>"))
    return interp.get("res")


def _analysis(root: S.Node, n: int) -> tuple[tuple, bool]:
    """The root's value set, and whether its selector is known to select a key in every row."""
    graph = build_graph(root)
    sets = infer_values(graph, VOCAB, n)
    node = graph.nodes[graph.root]
    return sets.values[node.index], sets.never_empty[node.inputs[0]]


def _inputs(n: int) -> list[list[str]]:
    return [list(t) for k in range(1, n + 1) for t in itertools.product(VOCAB, repeat=k)]


def _agrees(root: S.Node, n: int) -> None:
    model = compile_sop(root, VOCAB, n)
    inputs = _inputs(n)
    got = run_compiled(model, inputs)
    for tokens, out in zip(inputs, got, strict=True):
        assert out == list(S.evaluate(root, tokens).values), tokens


@pytest.mark.parametrize(
    "select",
    [
        "select(indices, 1, <=)",  # key 0 at every query
        "select(tokens, tokens, ==)",  # each query's own key
        "select(tokens, tokens, <=)",
        "select(indices, indices, <) or select(indices, 0, ==)",  # one side suffices
        "select(indices, length - 1, <=)",  # every key
        "select(indices, indices, <=)",  # its own key: the prefix
        # each side selects the query's own key, so their conjunction does
        "select(tokens, tokens, ==) and select(indices, indices, <=)",
    ],
)
def test_a_string_default_never_taken_does_not_block_a_mean(select: str) -> None:
    root = _program(f'res = aggregate({select}, indices, "c");')
    vals, never_empty = _analysis(root, 5)
    assert never_empty
    assert "c" not in vals
    _agrees(root, 5)


@pytest.mark.parametrize(
    "select",
    [
        "select(indices, indices, <)",  # query 0 selects nothing
        "select(tokens, tokens, <)",  # nor does the smallest token
        "select(indices, indices, <) and select(indices, 3, <)",
        "select(tokens, tokens, ==) and select(indices, indices, <)",  # not its own key
    ],
)
def test_a_default_that_can_be_taken_is_kept(select: str) -> None:
    root = _program(f'res = aggregate({select}, indices, "c");')
    vals, never_empty = _analysis(root, 5)
    assert not never_empty
    assert "c" in vals
    with pytest.raises(CompileError, match="is not a number"):
        compile_sop(root, VOCAB, 5)


def test_nan_is_refused_where_it_appears() -> None:
    """`select(x, x, ==)` would select nothing where x is nan (nan is not equal to itself), but
    no model holds nan (its residual labels are JSON, which has none): the analysis refuses x,
    located, before anything reads it."""
    tokens = S.TokensSOp(name="tokens")
    x = S.MapSOp(fn=lambda t: math.nan if t == "a" else 1.0, inputs=(tokens,), text="x", name="x")
    select = S.Select(keys=x, queries=x, comparison=S.Comparison.EQ)
    root = S.AggregateSOp(selector=select, sop=S.IndicesSOp(), default="c", name="res")
    with pytest.raises(CompileError, match=r"'x\(tokens\)' can be nan, which no model holds"):
        _analysis(root, 3)


def test_a_copy_gets_no_column_for_a_default_it_never_holds() -> None:
    """reverse's default "" is never its value: the output has a column per token only."""
    root = _program('res = aggregate(select(indices, length - indices - 1, ==), tokens, "");')
    model = compile_sop(root, VOCAB, 5)
    assert model.metadata["output"]["values"] == VOCAB
    _agrees(root, 5)


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10**6), st.booleans())
def test_a_selector_said_never_empty_selects_a_key_in_every_row(seed: int, twins: bool) -> None:
    """Soundness on random programs: wherever the analysis says a selector selects a key for
    every query, it does on every input of length 1..4 the interpreter runs."""
    from random_programs import random_program

    rng = random.Random(seed)
    int_tokens = twins or rng.random() < 0.5
    vocab = [0, 1, 2] if int_tokens else list("abc")
    root = random_program(rng, rng.randint(1, 4), int_tokens, twins=twins)
    inputs = [list(t) for k in range(1, 5) for t in itertools.product(vocab, repeat=k)]
    for selector in (n for n in S.walk(root) if isinstance(n, S.Selector)):
        graph = build_graph(S.SelectorWidthSOp(selector=selector, name="w"))
        try:
            sets = infer_values(graph, vocab, 4)
        except CompileError:
            continue
        if not sets.never_empty[graph.nodes[graph.root].inputs[0]]:
            continue
        for tokens in inputs:
            try:
                matrix = S.evaluate(selector, tokens)
            except RaspError:
                continue
            assert np.asarray(matrix).any(axis=1).all(), (tokens, selector)
