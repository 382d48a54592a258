"""How an unnamed s-op or selector is labelled: by its expression, each name in it written as what
the name held there, as the original names an s-op by its operands' values (`[x * indices for x in
[1, 2]]` gives `( 1 * indices )` and `( 2 * indices )` there; `(1 * indices)` and `(2 * indices)`
here). The REPL, error messages and a compiled model's operations (tests/compiler/test_graph.py)
all show it.
"""

from __future__ import annotations

import pytest

from rasp.errors import RaspError, Source
from rasp.interpreter import Interpreter, load_source
from rasp.parser import parse
from rasp.sops import Node, evaluate
from rasp.tools.repl import ReplSession


def labels(expression: str, setup: str = "") -> list[str]:
    """The labels of the nodes in the list `expression` evaluates to."""
    interp = load_source(Source("t.rasp", f"{setup}\nshown = {expression};"))
    found = interp.get("shown")
    assert isinstance(found, list)
    return [node.label for node in found]


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("[x * indices for x in [1, 2]]", ["(1 * indices)", "(2 * indices)"]),
        ("[indices < x for x in [1, 2]]", ["(indices < 1)", "(indices < 2)"]),
        ('[tokens == c for c in ["a", "b"]]', ['(tokens == "a")', '(tokens == "b")']),
        ("[x * 0.5 + indices for x in [3]]", ["(3 * 0.5 + indices)"]),
        (
            "[select(indices, x, ==) for x in [0, 1]]",
            ["select(indices, 0, ==)", "select(indices, 1, ==)"],
        ),
        (
            '[aggregate(select(indices, i, ==), tokens, d) for i, d in [[0, "z"]]]',
            ["aggregate(select(indices, 0, ==), tok..."],
        ),
        (
            "[[x * y + indices for x in [1, 2]] for y in [10]][0]",
            ["(1 * 10 + indices)", "(2 * 10 + indices)"],
        ),
        ('[x if tokens == "a" else 0 for x in [7]]', ['(7 if tokens == "a" else 0)']),
        ('[indicator(tokens == c) for c in ["a"]]', ['indicator(tokens == "a")']),
        (
            "[selector_width(select(indices, x, <)) for x in [2]]",
            ["selector_width(select(indices, 2, <))"],
        ),
        # a name of the program holding an atom too
        ("[n * indices]", ["(3 * indices)"]),
        # s-ops: a name holding one reads as its label; the input names as written
        ("[s + 1 for s in [indices, tokens_int]]", ["(indices + 1)", "(tokens_int + 1)"]),
        ("[s + 1 for s in [indices + 1]]", ["((indices + 1) + 1)"]),
        ('[tokens_str == "a", t + 1, q * 2]', ['(tokens_str == "a")', "(indices + 1)", "(q * 2)"]),
    ],
)
def test_a_name_in_a_label_is_written_as_what_it_held(expression: str, expected: list[str]) -> None:
    assert labels(expression, "n = 3; t = indices; q = indices + 1;") == expected


def test_a_label_keeps_the_value_a_name_held_when_it_was_evaluated() -> None:
    assert labels("early", "n = 3; early = [n * indices]; n = 4;") == ["(3 * indices)"]


def test_a_function_s_parameters_and_a_loop_s_variable_read_as_their_values() -> None:
    setup = """
def scaled(n, s) { return [n * s, s + n]; }
for k in [5, 6] { last = [k * indices]; }
"""
    assert labels("scaled(2, indices) + scaled(3, tokens_int)", setup) == [
        "(2 * indices)",
        "(indices + 2)",
        "(3 * tokens_int)",
        "(tokens_int + 3)",
    ]
    assert labels("last", setup) == ["(6 * indices)"]


def test_a_called_body_or_comprehension_inside_an_expression_shows_its_own_values_only() -> None:
    """What names held while a call ran, or a comprehension's element once per item, belongs to
    the nodes made there: the expression around them shows its own names' values."""
    interp = load_source(
        Source(
            "t.rasp",
            "def f(n) { return indices if n < 1 else f(n - 1) + n; }\n"
            "x = f(2);\n"
            "y = aggregate(select(indices, [k for k in [0, 1]][1], ==), tokens);",
        )
    )
    x, y = interp.get("x"), interp.get("y")
    assert isinstance(x, Node) and isinstance(y, Node) and x.span and y.span
    assert x.span.shown_text() == "f(2 - 1) + 2"
    assert y.span.shown_text() == "aggregate(select(indices, [k for k in [0, 1]][1], ==), tokens)"
    assert list(evaluate(x, "abc").values) == [3, 4, 5]


def test_the_repl_shows_the_values() -> None:
    session = ReplSession()
    session.feed("examples off")
    out = session.feed("[x * indices for x in [1, 2]];")
    assert out.splitlines()[1:3] == ["\t\t     s-op: (1 * indices)", "\t\t     s-op: (2 * indices)"]


def test_an_error_names_the_failing_input_by_its_values() -> None:
    interp = Interpreter()
    interp.exec_program(parse("v = [(tokens_int + x) / 0 for x in [7]][0];", "t.rasp"))
    with pytest.raises(RaspError) as caught:
        evaluate(interp.get("v"), [1, 2])
    assert caught.value.hint == "it failed at position 0, where (tokens_int + 7) = 8"
