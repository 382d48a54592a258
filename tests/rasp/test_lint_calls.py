"""The calls the lint warns of (rasp.lint_calls): `indicator` of a built-in s-op that holds no
bools, and a note on `round(x / 2)`, whose halves go to the even neighbour. Neither changes what
the program computes; each hint's spellings are checked against the interpreter."""

from __future__ import annotations

import re

import pytest

from rasp.errors import Source
from rasp.interpreter import Interpreter
from rasp.lint import lint
from rasp.parser import parse
from rasp.sops import evaluate


def _found(text: str) -> list[tuple[str, str, str]]:
    return [
        (d.severity, d.message, d.hint or "")
        for d in lint(parse(Source("t.rasp", text)).statements)
    ]


def _values(text: str, name: str, tokens: str) -> list[object]:
    interp = Interpreter()
    interp.exec_program(parse(Source("t.rasp", text)))
    return list(evaluate(interp.get(name), list(tokens)).values)


@pytest.mark.parametrize(
    ("name", "kept"),
    [("tokens", 'tokens != ""'), ("indices", "indices != 0"), ("length", "length != 0")],
)
def test_indicator_of_a_built_in_warns_and_its_kept_spelling_is_the_same_and_quiet(
    name: str, kept: str
) -> None:
    ((severity, message, hint),) = _found(f"y = indicator({name});")
    assert severity == "warning" and message.startswith(f"indicator({name}) is ")
    assert hint.endswith(f"indicator({kept}) keeps this meaning without the warning")
    assert not _found(f"y = indicator({kept});")
    for tokens in ("a", "hello"):
        assert _values(f"y = indicator({name});", "y", tokens) == _values(
            f"y = indicator({kept});", "y", tokens
        )


def test_indicator_of_a_comparison_or_a_rebound_name_is_quiet() -> None:
    assert not _found('y = indicator(tokens == "a");')
    assert not _found('x = tokens == "a";\ny = indicator(x);')
    assert not _found('tokens = tokens == "a";\ny = indicator(tokens);')


def test_round_of_a_halving_division_is_a_note_whose_floor_is_the_floor() -> None:
    ((severity, message, hint),) = _found("y = round(indices / 2);")
    assert severity == "note" and "round(indices / 2) is not the floor" in message
    assert _values("y = round(indices / 2);", "y", "abcdef") == [0, 0, 1, 2, 2, 2]  # unchanged
    floor = re.search(r"the floor is (.*?); ", hint)
    assert floor is not None and floor.group(1) == "(indices - indices % 2) / 2"
    assert _values(f"y = {floor.group(1)};", "y", "abcdef") == [0, 0, 1, 1, 2, 2]
    assert not _found("y = round((indices / 2));")  # the spelling that keeps it quiet
    assert not _found("y = round(indices / 3);")  # no halves
    assert not _found("y = round(5 / 2);")  # a constant shows its value
