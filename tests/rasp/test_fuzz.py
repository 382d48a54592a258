"""Fuzzing the front end: whatever the text, parse + exec + evaluate raise only `RaspError`.

Two sources of programs: the shipped programs with characters and tokens deleted, inserted, swapped
and duplicated, and expressions generated from the grammar's building blocks. Seeded and
derandomised, so a failure reproduces.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rasp.errors import RaspError
from rasp.interpreter import Interpreter
from rasp.parser import is_complete, parse
from rasp.sops import Node, evaluate

PROGRAMS = Path(__file__).parent.parent.parent / "programs"
TEXTS = [p.read_text(encoding="utf-8") for p in sorted(PROGRAMS.glob("*.rasp"))]
INPUTS: list[Any] = ["a(b)", ["1", "2", "2"], [1, 0, 3], "x"]
BUILT_IN_NAMES = frozenset(Interpreter().names())
SNIPPETS = [
    ";",
    ",",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "=",
    "==",
    "!=",
    "<",
    ">",
    "<=",
    "+",
    "-",
    "*",
    "/",
    "%",
    "^",
    "and",
    "or",
    "not",
    "in",
    "if",
    "else",
    "for",
    "def",
    "return",
    "select(",
    "aggregate(",
    "round",
    "indicator",
    "tokens",
    "indices",
    "length",
    "full_s",
    "0",
    "1",
    "2.5",
    '"a"',
    '"',
    "#",
    "\n",
    " ",
    "load",
    "draw",
    "set example",
    "x",
    "f(",
    "len(",
    "range(",
    "zip(",
    "s-op",
    "§",
    "'",
]

SETTINGS = settings(
    max_examples=700,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def run_everything(text: str) -> None:
    """Parse, run and evaluate every named node on a few inputs; only RaspError may escape."""
    is_complete(text[: len(text) // 2])  # a prefix, as the REPL sees a statement being typed
    try:
        program = parse(text, "fuzz.rasp")
    except RaspError as exc:
        check_reported(exc)
        return
    interpreter = Interpreter()
    for stmt in program.statements:
        try:
            interpreter.exec_statement(stmt)
        except RaspError as exc:
            check_reported(exc)
    user = [n for n in interpreter.names() if n not in BUILT_IN_NAMES]
    for name in user[:6]:
        value = interpreter.get(name)
        if not isinstance(value, Node):
            continue
        for tokens in INPUTS:
            try:
                result = evaluate(value, tokens)
            except RaspError as exc:
                check_reported(exc)
                continue
            assert isinstance(result, np.ndarray) or len(result) == len(tokens)


def check_reported(exc: RaspError) -> None:
    """A user's mistake, rendered; never a bug of ours wrapped as 'internal error'."""
    assert not exc.message.startswith("internal error"), exc.render()
    assert exc.render()


@st.composite
def mutated_program(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(TEXTS))
    for _ in range(draw(st.integers(1, 4))):
        if not text:
            break
        i = draw(st.integers(0, len(text) - 1))
        j = draw(st.integers(i, min(len(text), i + 12)))
        action = draw(st.sampled_from(["delete", "insert", "swap", "duplicate", "char"]))
        if action == "delete":
            text = text[:i] + text[j:]
        elif action == "insert":
            text = text[:i] + draw(st.sampled_from(SNIPPETS)) + text[i:]
        elif action == "swap":
            k = draw(st.integers(0, len(text) - 1))
            chars = list(text)
            chars[i], chars[k] = chars[k], chars[i]
            text = "".join(chars)
        elif action == "duplicate":
            text = text[:j] + text[i:j] + text[j:]
        else:
            text = text[:i] + draw(st.characters(codec="utf-8")) + text[i:]
    return text


@SETTINGS
@given(mutated_program())
def test_mutated_programs_fail_only_with_rasp_errors(text: str) -> None:
    run_everything(text)


ATOMS = st.sampled_from(
    [
        "tokens",
        "indices",
        "length",
        "0",
        "1",
        "2",
        "-1",
        "2.5",
        '"a"',
        '"§"',
        "True",
        "[1, 2]",
        '{"a": 1}',
        "full_s",
        "tokens_int",
        "x",
        "[]",
        '""',
    ]
)
BINARY = st.sampled_from(["+", "-", "*", "/", "%", "^", "==", "!=", "<", ">=", "and", "or", "in"])


def expressions() -> st.SearchStrategy[str]:
    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.tuples(inner, BINARY, inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
            st.tuples(st.sampled_from(["not ", "-", "round(", "indicator("]), inner).map(
                lambda t: t[0] + t[1] + (")" if t[0].endswith("(") else "")
            ),
            st.tuples(inner, inner, st.sampled_from(["==", "<", "!=", ">="])).map(
                lambda t: f"select({t[0]}, {t[1]}, {t[2]})"
            ),
            st.tuples(inner, inner).map(lambda t: f"aggregate({t[0]}, {t[1]})"),
            st.tuples(inner, inner, inner).map(lambda t: f"({t[0]} if {t[1]} else {t[2]})"),
            st.tuples(inner, inner).map(lambda t: f"{t[0]}[{t[1]}]"),
            st.tuples(
                st.sampled_from(["count", "shift", "sort", "max", "selector_width", "f"]),
                st.lists(inner, max_size=3),
            ).map(lambda t: f"{t[0]}({', '.join(t[1])})"),
        )

    return st.recursive(ATOMS, extend, max_leaves=8)


@SETTINGS
@given(st.lists(expressions(), min_size=1, max_size=3))
def test_generated_expressions_fail_only_with_rasp_errors(exprs: list[str]) -> None:
    body = "def f(a) { return a; }\n" + "".join(f"x{i} = {e};\n" for i, e in enumerate(exprs))
    run_everything(body)


@pytest.mark.slow
@settings(SETTINGS, max_examples=5000)
@given(mutated_program())
def test_many_more_mutated_programs(text: str) -> None:
    run_everything(text)


@pytest.mark.slow
@settings(SETTINGS, max_examples=5000)
@given(st.lists(expressions(), min_size=1, max_size=3))
def test_many_more_generated_expressions(exprs: list[str]) -> None:
    test_generated_expressions_fail_only_with_rasp_errors.hypothesis.inner_test(exprs)
