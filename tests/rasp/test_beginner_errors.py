"""Mistakes a first-time user makes writing the paper's programs (a Dyck balance of bools, a sort
with ties, a misspelt `aggregate`, `len(tokens)`, C's `c ? a : b`): each error points at the
mistake and its hint says what to write instead."""

from __future__ import annotations

import pytest

from rasp.errors import RaspError
from rasp.interpreter import Interpreter
from rasp.parser import parse
from rasp.sops import evaluate


def error_of(text: str, given: str | None = None) -> RaspError:
    """The error `text` raises, when run, or when its last name is evaluated on `given`."""
    try:
        interpreter = Interpreter()
        interpreter.exec_program(parse(text, "prog.rasp"))
        if given is not None:
            name = interpreter.last_assigned
            assert name is not None
            evaluate(interpreter.get(name), list(given))
    except RaspError as exc:
        return exc
    pytest.fail("ran without an error")


def test_a_mean_of_bools_suggests_indicator() -> None:
    # the paper's Dyck balance, written with a comparison where the original needs numbers
    text = 'p = select(indices, indices, <=);\nopens = aggregate(p, tokens == "(");\n'
    exc = error_of(text, "(()")
    assert str(exc) == "asked to average multiple values, but they are non-numbers"
    assert exc.span is not None and (exc.span.line, exc.span.col) == (2, 9)
    assert exc.hint is not None
    assert "indicator(" in exc.hint
    assert "position 1" in exc.hint  # the first query that selects several keys


def test_a_mean_of_strings_names_the_query_and_its_keys() -> None:
    # a sort without a tie-break: the two "a"s go to the same place
    text = (
        "smaller = select(tokens, tokens, <);\n"
        "target = selector_width(smaller);\n"
        "sorted = aggregate(select(target, indices, ==), tokens);\n"
    )
    exc = error_of(text, "baa")
    assert exc.hint is not None
    assert 'position 0 selects positions 1 and 2, holding "a", "a":' in exc.hint
    assert "indicator(" not in exc.hint


@pytest.mark.parametrize(
    ("line", "meant"),
    [
        ("x = agregate(select(indices, indices, ==), tokens);", "aggregate"),
        ("x = Aggregate(select(indices, indices, ==), tokens);", "aggregate"),
        ("x = selcet(indices, indices, ==);", None),  # the `==` argument fails first: has hint
        ("x = [i for i in rnage(3)];", "range"),
    ],
)
def test_a_misspelt_built_in_form_is_suggested(line: str, meant: str | None) -> None:
    exc = error_of(line)
    assert exc.hint is not None
    if meant is not None:
        assert str(exc).startswith("Undefined variable")
        assert exc.hint.startswith(f"did you mean '{meant}'?")
        assert f"{meant}(" in exc.hint  # how it is called


def test_len_of_an_s_op_points_to_length() -> None:
    exc = error_of("n = len(tokens);")
    assert str(exc) == "attempting to compute length of non-list: tokens"
    assert exc.hint is not None and "`length`" in exc.hint


def test_an_s_op_applied_to_an_s_op_says_how_to_combine() -> None:
    exc = error_of("n = length(tokens);")
    assert exc.hint is not None
    assert "length" in exc.hint and 'length("abc")' in exc.hint


def test_c_conditional_names_the_rasp_spelling() -> None:
    exc = error_of('x = tokens == "a" ? 1 : 0;')
    assert exc.span is not None and exc.span.col == 19
    assert exc.hint is not None and "a if c else b" in exc.hint


@pytest.mark.parametrize("line", ["def f(x): return x + 1;", "for i in range(3): x = i;"])
def test_python_colon_before_a_body_says_braces(line: str) -> None:
    exc = error_of(line)
    assert str(exc) == "a def's or for's body is in braces, not after ':'"
    assert exc.span is not None and line[exc.span.col - 1] == ":"
    assert exc.hint is not None and "{ return x + 1; }" in exc.hint


@pytest.mark.parametrize("line", ["x = tokens + 1;", "x = tokens > 2;", "x = indices + tokens;"])
def test_arithmetic_on_string_tokens_suggests_tokens_int(line: str) -> None:
    exc = error_of(line, "312")
    assert exc.hint is not None
    assert exc.hint.startswith("it failed at position 0, where ")
    assert exc.hint.endswith("tokens_int (or tokens_float) reads them as numbers")


def test_no_tokens_int_hint_where_the_tokens_are_not_the_strings() -> None:
    exc = error_of('x = indices + "a";', "abc")
    assert exc.hint == "it failed at position 0, where indices = 0"


def test_no_tokens_int_hint_where_the_tokens_are_letters() -> None:
    exc = error_of("x = tokens + 1;", "abc")
    assert exc.hint == 'it failed at position 0, where tokens = "a" (a string)'


def test_an_unquoted_input_of_an_s_op_is_shown_quoted() -> None:
    exc = error_of(
        "reverse = aggregate(select(indices, length - indices - 1, ==), tokens);\nreverse(hello);"
    )
    assert str(exc) == "Undefined variable: hello"
    assert exc.hint == 'an input is written in quotes: reverse("hello")'
    # a typo of a name keeps its own hint; a def's argument may be any value: no guess
    assert error_of("reverse = tokens;\nreverse(tokesn);").hint == "did you mean 'tokens'?"
    assert error_of("def f(x) { return x; }\nf(hello);").hint is None


@pytest.mark.parametrize(
    ("line", "name"),
    [
        ("x = tokens == a;", "a"),
        ("x = a != tokens;", "a"),  # the s-op after it is a name: read, not evaluated
        ('x = tokens in ["a", e];', "e"),
        ("x = select(tokens, a, ==);", "a"),
        ("x = select(b, tokens, ==);", "b"),
        ("x = aggregate(select(indices, indices, ==), tokens, none);", "none"),
        ("x = count(tokens, a);", "a"),  # a def of the prelude, beside an s-op argument
        ("x = contains(tokens, b);", "b"),
    ],
)
def test_an_unquoted_string_beside_an_s_op_is_shown_quoted(line: str, name: str) -> None:
    # a class's first programs: `tokens == a` for `tokens == "a"` said only "Undefined variable"
    exc = error_of(line)
    assert str(exc) == f"Undefined variable: {name}"
    assert exc.hint == f'a string is written in quotes: "{name}"'


@pytest.mark.parametrize(
    ("line", "hint"),
    [
        ("x = tokens == lenght;", "did you mean 'length'?"),  # a typo keeps its own hint
        (
            "x = tokens == i;",
            "each position's index (0 to length - 1) is the built-in s-op `indices`",
        ),
        ("x = 1 == a;", None),  # no s-op beside it: no guess
        ("x = tokens + a;", None),  # arithmetic: a number is as likely as a string
        ("def f(x, y) { return x; }\nz = f(1, a);", None),
        ("x = a == b;", None),
    ],
)
def test_an_undefined_name_elsewhere_gets_no_quoting_hint(line: str, hint: str | None) -> None:
    assert error_of(line).hint == hint


@pytest.mark.parametrize(
    ("line", "hint_part"),
    [
        ("for t in tokens { x = t; }", "an s-op holds its value at every position at once"),
        ("y = [t for t in tokens];", "an s-op holds its value at every position at once"),
        ("y = {t: 1 for t in indices};", "loop over range(n)"),
        ('for c in "aei" { v = c; }', 'write its items as a list, ["a", "e", "i"]'),
        ("for i in 3 { v = i; }", "loop over range(3)"),
        ("for i in select(indices, indices, ==) { v = i; }", "aggregate(sel, x)"),
    ],
)
def test_a_loop_over_no_list_says_what_to_loop_over(line: str, hint_part: str) -> None:
    # Python's `for t in tokens` was refused with no hint
    exc = error_of(line)
    assert "a list or dict, but got:" in str(exc)
    assert exc.hint is not None and hint_part in exc.hint


@pytest.mark.parametrize(
    ("line", "hint"),
    [
        (
            "x = aggregate(select(indices, indices - 1, ==), tokens);",
            "position 0 selects no key, so it gets the default 0, among strings: give a default "
            'of their type as the third argument, aggregate(sel, values, "_")',
        ),
        (
            'x = aggregate(select(indices, indices + 1, ==), indices, "-");',
            'position 2 selects no key, so it gets the default "-", among ints: give a default '
            "of their type as the third argument, aggregate(sel, values, 0)",
        ),
        (  # a mean of numbers beside a string default: the slower path, by rows
            'x = aggregate(select(indices, indices, <), indices, "-");',
            'position 0 selects no key, so it gets the default "-", among ints: give a default '
            "of their type as the third argument, aggregate(sel, values, 0)",
        ),
    ],
)
def test_a_default_of_another_type_names_the_query_that_selects_nothing(
    line: str, hint: str
) -> None:
    # a shift without its default said only that the default must have the values' type
    exc = error_of(line, "abc")
    assert str(exc).startswith("attempted to create sequence with vals of different types")
    assert exc.hint == hint
