"""A select one side of which is the same at every position (a constant, the length) compares
through a bool of the other side (compiler.constant_sides): `select("ab", q, ==)` is
`select(True, "ab" == q, ==)`, a query predicate, not a one-hot of every value of q."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from compiler import compile_sop
from compiler.constant_sides import constant_sides
from rasp import sops as S
from rasp.errors import RaspError
from rasp.interpreter import Interpreter
from rasp.parser import parse
from tests.runtime_helpers import run_compiled

# two-character strings (and the first token alone): 12 values, none a number
PAIRS = 'prev = aggregate(select(indices, indices - 1, ==), tokens, "");\nq = prev + tokens;\n'
# a prefix mean: many numbers
MEAN = "m = aggregate(select(indices, indices, <=), tokens_int);\n"


def _program(text: str) -> S.Node:
    interp = Interpreter()
    interp.exec_program(parse(text, "<test>"))
    return interp.get("res")


def _inputs(vocab: str, n: int) -> list[list[str]]:
    return [list(t) for k in range(1, n + 1) for t in itertools.product(vocab, repeat=k)]


def _matrix(selector: S.Selector, tokens: list[str]) -> np.ndarray | str:
    try:
        return np.asarray(S.Evaluator(tokens).matrix(selector))
    except RaspError:
        return "raises"


@pytest.mark.parametrize(
    ("text", "vocab", "side"),
    [
        (PAIRS + 'res = selector_width(select("ab", q, ==));', "abc", 0),
        (PAIRS + 'res = selector_width(select(q, "ab", <));', "abc", 1),
        (PAIRS + 'res = selector_width(select("b", q, >=));', "abc", 0),
        (MEAN + "res = selector_width(select(length, m, <));", "012", 0),
        (MEAN + "res = selector_width(select(m, length - 1, !=));", "012", 1),
        (MEAN + "res = selector_width(select(1, m, ==));", "012", 0),
        (MEAN + 'res = selector_width(select("a", m, <));', "012", 0),  # raises on every input
    ],
)
def test_the_rewritten_select_selects_the_same_keys(text: str, vocab: str, side: int) -> None:
    root = _program(text)
    new = constant_sides(root, list(vocab), 4)
    assert isinstance(new, S.SelectorWidthSOp) and isinstance(new.selector, S.Select)
    old, select = root.selector, new.selector  # type: ignore[attr-defined]
    true, holds = (select.keys, select.queries) if side == 0 else (select.queries, select.keys)
    assert isinstance(true, S.ConstSOp) and true.value is True
    assert isinstance(holds, S.MapSOp) and select.comparison is S.Comparison.EQ
    for tokens in _inputs(vocab, 4):
        want, got = _matrix(old, tokens), _matrix(select, tokens)
        assert isinstance(want, str) == isinstance(got, str), tokens
        assert isinstance(want, str) or np.array_equal(want, got), tokens


@pytest.mark.parametrize(
    "text",
    [
        'res = selector_width(select("a", tokens, ==));',  # the embedding's one-hot anyway
        "res = selector_width(select(0, indices, ==));",  # a known matrix
        'x = tokens == "a";\nres = selector_width(select(True, x, ==));',  # two values
        PAIRS + "res = selector_width(select(q, q, ==));",  # no side is the same everywhere
        PAIRS + "res = selector_width(select(prev, q, ==));",
    ],
)
def test_what_is_kept(text: str) -> None:
    root = _program(text)
    assert constant_sides(root, list("abc"), 4) is root


def test_a_side_the_analysis_shows_constant_is_one() -> None:
    # `zero` reads the tokens, yet holds 0 everywhere: only the value analysis knows
    root = _program(MEAN + "zero = tokens_int * 0;\nres = selector_width(select(zero, m, <));")
    new = constant_sides(root, list("012"), 4)
    assert new is not root
    for tokens in _inputs("012", 4):
        assert np.array_equal(_matrix(root.selector, tokens), _matrix(new.selector, tokens))  # type: ignore[attr-defined,arg-type]


# Before: a one-hot of q's 12 values on each head's query or key side, 4,135 parameters at N = 6
# (5,047 at N = 10); after: one bool each, 2,727 (3,271).
WIDTH = (
    PAIRS + 'res = selector_width(select("ab", q, ==)) + aggregate(select(q, "ca", ==), indices);'
)


def test_the_width_and_the_mean_compile_small_and_exact() -> None:
    root = _program(WIDTH)
    n = 6
    model = compile_sop(root, list("abc"), n, name="res")
    assert model.param_count() < 3_000
    inputs = _inputs("abc", n)
    for tokens, got in zip(inputs, run_compiled(model, inputs), strict=True):
        assert got == list(S.evaluate(root, tokens).values), tokens
