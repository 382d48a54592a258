"""Interpreter expressions (atoms, s-ops, selectors, indexing), checked against the original RASP's
behaviour (values derived by hand); tests/rasp/test_statements.py has the statements."""

from __future__ import annotations

from typing import Any

import pytest

from rasp.errors import RaspRuntimeError, RaspTypeError
from rasp.sops import (
    AggregateSOp,
    ConstSOp,
    LengthSOp,
    MapSOp,
    Select,
    SelectAnd,
    SelectNot,
    SelectOr,
    evaluate,
)
from tests.rasp.interpreting import run, seq, value

# ---- atoms follow Python ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("3 and 4", 4),
        ("0 or 5", 5),
        ("not 0", True),
        ("1 / 2", 0.5),
        ("7 / 7", 1.0),
        ("2 ^ 3 ^ 2", 64),
        ("2 ^ -1", 0.5),
        ("7 % 3", 1),
        ("-7 % 3", 2),
        ("10 % 4 * 2", 2),  # % below *: 10 % 8
        ("round(2.5)", 2),  # half to even
        ("round(3.5)", 4),
        ("round(-0.5)", 0),
        ("1 < 2 < 3", True),  # (1<2)<3 = True<3
        ("3 > 2 > 1", False),  # (3>2)>1 = True>1
        ("not 1 == 0", True),  # (not 1) == 0
        ("True or False and False", False),  # same level, left to right
        ('"ab" + "c"', "abc"),
        ("[1] + [2, 3]", [1, 2, 3]),
        ("1 if 0 else 2", 2),
        ("2 in [1, 2]", True),
        ('"z" in ["a"]', False),
        ("len([1, 2, 3])", 3),
        ("range(2, 8, 3)", [2, 5]),
        ("zip([1, 2], [3, 4])", [[1, 3], [2, 4]]),
        ("[x * x for x in range(4)]", [0, 1, 4, 9]),
        ("{k: 1 for k in [1, 2]}", {1: 1, 2: 1}),
        ("[a + b for a, b in zip([1, 2], [10, 20])]", [11, 22]),
        ('{"a": 1, "b": 2}["b"]', 2),
        ('"hello"[1]', "e"),
        ("[5, 6][-1]", 6),
        ("1 != 2", True),
    ],
)
def test_atom_expressions(expr: str, expected: Any) -> None:
    got = value(f"x = {expr};")
    assert got == expected and type(got) is type(expected)


def test_ternary_on_an_atom_is_lazy() -> None:
    assert value("x = 1 if True else undefined_name;") == 1


# ---- s-ops build lazy nodes ---------------------------------------------------------------------


def test_comparison_with_a_constant_is_a_map_of_one_sop() -> None:
    node = value('x = tokens == "a";')
    assert isinstance(node, MapSOp) and len(node.inputs) == 1
    assert node.text == 'tokens == "a"' and node.name == "x"
    assert node.span is not None and node.span.text() == 'tokens == "a"'
    assert list(evaluate(node, "bab").values) == [False, True, False]


def test_two_sop_operands_and_the_operator_text() -> None:
    node = value("x = length   -   indices;")
    assert isinstance(node, MapSOp) and node.text == "length - indices"
    assert isinstance(node.inputs[0], LengthSOp)
    assert list(evaluate(node, "abc").values) == [3, 2, 1]


@pytest.mark.parametrize(
    ("expr", "tokens", "expected"),
    [
        ("indices % 2 * 3", "abcdefg", [0, 1, 2, 3, 4, 5, 0]),  # indices % 6
        ("indices / 2", "abc", [0.0, 0.5, 1.0]),
        ("indices ^ 2", "abcd", [0, 1, 4, 9]),
        ("-indices + 1", "abc", [1, 0, -1]),
        ("round(indices / 2)", "abcd", [0, 0, 1, 2]),  # 0.5 -> 0, 1.5 -> 2
        ('indicator(tokens == "a")', "aba", [1, 0, 1]),
        ('not tokens == "a"', "ab", [False, False]),  # (not tokens) == "a"
        ("indices > 0 and indices < 2", "abc", [False, True, False]),
        ("indices == 0 or indices == 2 and True", "abc", [True, False, True]),
        ('"y" if tokens == "a" else tokens', "ab", ["y", "b"]),
        ("1 if indices else 0", "abc", [0, 1, 1]),
        ('tokens in ["a", "c"]', "abc", [True, False, True]),
        ('tokens + "!"', "ab", ["a!", "b!"]),
        ('"<" + tokens', "ab", ["<a", "<b"]),
        ("10 - indices", "abc", [10, 9, 8]),
        ("2 ^ indices", "abc", [1, 2, 4]),
        ("indices != 1", "abc", [True, False, True]),
        ("1 < indices < 3", "abcd", [True] * 4),  # (1 < i) < 3: a bool is always < 3
        ("max(indices, 1)", "abc", [1, 1, 2]),
        ("min(indices, 1)", "abc", [0, 1, 1]),
    ],
)
def test_elementwise(expr: str, tokens: str, expected: list[Any]) -> None:
    assert seq(f"x = {expr};", tokens) == expected


def test_select_compares_key_op_query() -> None:
    sel = value("x = select(indices, indices, <);")
    assert isinstance(sel, Select)
    matrix = evaluate(sel, "abc")
    # [query i, key j] is key[j] < query[i]: each query selects the strictly earlier positions.
    assert matrix.tolist() == [[False, False, False], [True, False, False], [True, True, False]]
    at0 = value("x = select(indices, 0, ==);")
    assert isinstance(at0.queries, ConstSOp) and at0.queries.value == 0
    assert evaluate(at0, "abc").tolist() == [[True, False, False]] * 3


def test_selector_logic_builds_selector_nodes() -> None:
    i = run(
        "a = select(indices, indices, <); b = select(indices, 0, ==);"
        "c = a and b; d = a or b; e = not a;"
    )
    assert isinstance(i.get("c"), SelectAnd)
    assert isinstance(i.get("d"), SelectOr)
    assert isinstance(i.get("e"), SelectNot)
    assert evaluate(i.get("d"), "abc").tolist() == [
        [True, False, False],
        [True, False, False],
        [True, True, False],
    ]


def test_aggregate_rules() -> None:
    prog = "x = aggregate(select(indices, indices, <=), indices);"
    assert seq(prog, "abc") == [0, 0.5, 1.0]  # one selected: passes the int; several: the mean
    node = value(prog)
    assert isinstance(node, AggregateSOp) and node.default == 0
    assert seq('x = aggregate(select(indices, indices, <), tokens, "-");', "ab") == ["-", "a"]
    assert seq("x = aggregate(select(indices, 0, ==), 7);", "ab") == [7, 7]  # an atom broadcasts
    with pytest.raises(RaspRuntimeError, match="non-numbers"):
        seq("x = aggregate(full_s, tokens);", "hello")
    with pytest.raises(RaspRuntimeError, match="different types"):
        seq("x = aggregate(select(indices, indices, <), tokens);", "ab")  # default 0 among strings


def test_an_sop_meets_any_other_value_as_the_original() -> None:
    # The original applies Python's operator at each position, whatever the other value is: a
    # list, dict or function compares unequal, and a non-atom result fails when evaluated.
    assert seq("x = indices == [1];", "ab") == [False, False]
    assert seq("x = [0] == indices;", "ab") == [False, False]
    assert seq('x = indices == {"a": 1};', "ab") == [False, False]
    assert seq("def f(a) { return a; }\nx = indices == f;", "ab") == [False, False]
    with pytest.raises(RaspTypeError, match="got list: \\[1\\]"):
        seq("x = indices and [1];", "ab")
    with pytest.raises(RaspRuntimeError, match="'<' not supported"):
        seq("x = indices < [1];", "ab")
    with pytest.raises(RaspRuntimeError, match="got list"):
        seq("x = indices * [1];", "ab")  # each value a list
    with pytest.raises(RaspTypeError, match="Cannot apply == to selector"):
        run("x = indices == select(indices, indices, ==);")


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        # Python compares the items, and the original's `==` on an s-op gives an s-op, which is
        # true: an s-op item equals anything. A selector or function equals only itself.
        ("[indices] == [length]", True),
        ("[1] == [indices]", True),
        ("[1, indices] == [2, length]", False),
        ("[[indices], 2] == [[1], 2]", True),
        ('{"a": indices} == {"a": 1}', True),
        ("[indices] < [length]", False),  # equal items: the shorter list is less
        ("[indices] < [length, 1]", True),
        ("[indices] <= [length]", True),
        ("[indices] != [length]", False),
        ("1 in [indices]", True),
        ('"a" in [full_s]', False),
        ("[full_s] == [full_s]", True),
        ("[select(indices, indices, ==)] == [select(indices, indices, ==)]", False),
        ("[select(indices, indices, ==)] == [indices]", True),
    ],
)
def test_lists_holding_sops_compare_as_in_the_original(expr: str, expected: bool) -> None:
    assert value(f"x = {expr};") is expected


def test_ordering_a_selector_item_names_its_kind() -> None:
    # Python's error, with the kinds of RASP values (not our class names).
    with pytest.raises(RaspTypeError, match="'<' not supported between a selector and a number"):
        run("x = [full_s] < [1];")


@pytest.mark.parametrize(
    "program",
    [
        "x = indices and [1];",
        "x = [] or indices;",
        'x = tokens or {"a": 1};',
        "def f(a) { return a; }\nx = indices and f;",
    ],
)
def test_and_or_with_an_sop_refuse_a_list_dict_or_function(program: str) -> None:
    # The original makes the other operand a constant s-op (as for an elementwise `if`), and an
    # s-op holding a list, dict or function fails ("illegal val types"); it has no value.
    with pytest.raises(RaspTypeError, match="must be s-ops or atoms, got") as info:
        run(program)
    assert info.value.span is not None


def test_an_aggregate_default_may_be_any_value_but_fails_where_used() -> None:
    # The original refuses only an s-op or selector default; another fails only where it is used.
    assert seq("x = aggregate(full_s, indices, [1]);", "abc") == [1.0, 1.0, 1.0]
    assert seq('x = aggregate(select(indices, indices, ==), tokens, {"a": 1});', "ab") == ["a", "b"]
    with pytest.raises(RaspRuntimeError, match="got list"):
        seq("x = aggregate(select(indices, indices, <), indices, [1]);", "ab")
    with pytest.raises(RaspTypeError, match="Expected atom, got: full_s"):
        run("x = aggregate(full_s, indices, full_s);")


def test_indexing_as_the_original() -> None:
    # Values from the original's tests/in/indexing.txt (example "12345").
    d = 'd = {"1": 1, "2": 2, "3": 3, "4": 5, "5": 4};'
    assert value(d + ' x = d["4"];') == 5
    assert seq(d + " x = d[tokens];", "12345") == [1, 2, 3, 5, 4]
    with pytest.raises(RaspRuntimeError, match=r"index \[ 4 \] not in dict\."):
        run(d + " x = d[4];")
    with pytest.raises(RaspRuntimeError, match=r"index \[ 0 \] not in dict\."):
        seq(d + " x = d[indices];", "12345")
    # a missing string key reads the same from an atom and from an s-op: a RASP string in double
    # quotes, as errors write strings (the s-op's said 'h', Python's repr)
    with pytest.raises(RaspRuntimeError) as e:
        run(d + ' x = d["h"];')
    assert str(e.value) == 'index [ "h" ] not in dict.'
    with pytest.raises(RaspRuntimeError) as e:
        seq(d + " x = d[tokens];", "1h")
    assert str(e.value) == 'index [ "h" ] not in dict.'
    a = 'a = "qwertyuioplkjhgfdsazxcvbnm";'
    assert value(a + " x = a[6];") == "u"
    assert seq(a + " x = a[indices];", "12345") == list("qwert")
    assert seq(a + " x = a[indices * 3];", "12345") == list("qrupj")
    assert seq("x = tokens[4];", "12345") == ["5"] * 5
    with pytest.raises(RaspTypeError, match="index into sequence has to be integer, got: indices"):
        run("x = tokens[indices];")
    b = "b = [5, 8, 2, 9, 4, 7, 5];"
    assert seq(b + " x = b[indices];", "12345") == [5, 8, 2, 9, 4]
    assert value(b + " x = b[5];") == 7
    assert seq("x = tokens[-1];", "abc") == ["c"] * 3
    assert seq("x = tokens[7];", [1, 2]) == [0, 0]  # nothing selected: the default
    # a bad index per position, in the original's words (it said "tuple index out of range")
    with pytest.raises(RaspRuntimeError) as e:
        seq('x = "abc"[indices];', "hello")
    assert str(e.value) == "index 3 out of range for string of length 3"
    # where and on which values, as every failing elementwise operation says (it said nothing)
    assert e.value.hint == "it failed at position 3, where indices = 3"
    with pytest.raises(RaspRuntimeError) as e:
        seq("x = [1, 2, 3][indices];", "hello")
    assert str(e.value) == "index 3 out of range for list of length 3"
    with pytest.raises(RaspRuntimeError) as e:
        seq("x = [1, 2, 3][indices + 0.5];", "ab")
    assert str(e.value) == "index into list has to be integer, got: 0.5"
    assert seq("x = [1, 2, 3][-indices - 1];", "ab") == [3, 2]


def test_a_negative_sop_index_counts_back_from_the_length_in_scope() -> None:
    """The original reads `x[-k]` at `length - k` with `length` looked up where the index is (its
    _index_into_sequence), so a local `length` in a def, or a comprehension's variable, is used:
    there f(indices) below is tokens itself; it was tokens' last value here."""
    f = "def f(x) { length = x + 1; return tokens[-1]; }"
    assert seq(f + " x = f(indices);", "abc") == ["a", "b", "c"]
    # a nested def reads its enclosing def's local, as lexical scopes do there
    g = "def g() { length = indices + 2; def h() { return tokens[-2]; } return h(); }"
    assert seq(g + " x = g();", "abc") == ["a", "b", "c"]
    assert seq("x = [tokens[-1] for length in [indices + 1]][0];", "abc") == ["a", "b", "c"]
    # the input's length everywhere else, a library function's body included
    assert (
        seq('def k(x) { length = x; return count(tokens, "a"); } x = k(indices);', "aba") == [2] * 3
    )
    # a `length` that is no s-op cannot be counted back from (the original fails: 'int' object
    # has no attribute 'setname')
    with pytest.raises(RaspTypeError, match="length"):
        run("def f(x) { length = x; return tokens[-1]; } x = f(3);")
