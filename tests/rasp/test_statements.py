"""Interpreter statements, results, names and errors, checked against the original RASP's behaviour
(values derived by hand); tests/rasp/test_interpreter.py has the expressions."""

from __future__ import annotations

import numpy as np
import pytest

from rasp import ast
from rasp.errors import RaspArityError, RaspError, RaspNameError, RaspRuntimeError, RaspTypeError
from rasp.interpreter import Interpreter, ResultKind
from rasp.parser import parse
from rasp.sops import (
    SeqType,
    SOp,
    evaluate,
)
from rasp.values import RaspFunction
from tests.rasp.interpreting import run, seq

# ---- statements ------------------------------------------------------------------------------


def test_assignment_renames_the_node() -> None:
    i = run("a = indices + 1; b = a;")
    assert i.get("a") is i.get("b") and i.get("a").name == "b"


def test_multi_assignment_and_function_returning_two_values() -> None:
    i = run("def f(x) { return x, x + 1; } a, b = f(1); c, d = 3, 4; e = 5, 6;")
    assert (i.get("a"), i.get("b"), i.get("c"), i.get("d"), i.get("e")) == (1, 2, 3, 4, [5, 6])
    with pytest.raises(RaspTypeError, match="expected 2 values, but got: 3"):
        run("a, b = 1, 2, 3;")


def test_multi_assignment_destructures_a_string_or_dict_as_the_original() -> None:
    # The original zips the names with the one value: a string gives its characters, a dict
    # its keys (as `for a, b in ["xy"]` does here too).
    i = run('a, b = "xy"; c, d = {"p": 1, "q": 2}; def f() { return "uv"; } e, g = f();')
    assert [i.get(n) for n in "abcdeg"] == ["x", "y", "p", "q", "u", "v"]
    with pytest.raises(RaspTypeError, match="expected 2 values, but got: 3"):
        run('a, b = "xyz";')


def test_functions_are_closures_resolved_at_call_time() -> None:
    i = run("def f() { return y; } y = 1; a = f(); y = 2; b = f();")
    assert (i.get("a"), i.get("b")) == (1, 2)
    assert isinstance(i.get("f"), RaspFunction)


def test_function_locals_stay_local_and_may_shadow_library_names() -> None:
    i = run("def f(x) { count = x + 1; return count; } a = f(1);")
    assert i.get("a") == 2
    assert isinstance(i.get("count"), RaspFunction)  # the library's count is untouched


def test_for_runs_in_the_enclosing_scope_and_comprehensions_do_not() -> None:
    i = run("s = 0; for k in [1, 2, 3] { s = s + k; } l = [q for q in [1]];")
    assert i.get("s") == 6 and i.get("k") == 3
    with pytest.raises(RaspNameError):
        i.get("q")
    i = run('for key in {"a": 1, "b": 2} { last = key; }')
    assert i.get("last") == "b"
    # an empty body (the original's grammar needs a statement or a comment) binds the variable
    assert run("for k in [1, 2] { }").get("k") == 2


def test_results_and_out() -> None:
    i = Interpreter()
    results = i.exec_program(
        parse(
            'x = 1; x; 2 + 3; reverse = tokens; reverse("ab");'
            "def f() { return 1; } for a in [1] { }"
        )
    )
    kinds = [r.kind for r in results]
    assert kinds == [
        ResultKind.ASSIGN,
        ResultKind.EXPR,
        ResultKind.EXPR,
        ResultKind.ASSIGN,
        ResultKind.EXPR,
        ResultKind.DEF,
        ResultKind.FOR,
    ]
    assert results[1].names == ("x",) and results[2].names == ("out",) and results[2].values == (5,)
    applied = results[4]
    assert applied.names == () and list(applied.values[0].values) == ["a", "b"]
    assert applied.values[0].type is SeqType.STRINGS
    assert i.get("out") is i.get(
        "reverse"
    )  # the last assignment's value; applications bind nothing
    assert i.last_assigned == "reverse"


def test_out_starts_as_the_tokens() -> None:
    # The original's REPL runs `tokens = tokens_str;` last as it starts, which binds out.
    i = run("x = out;")
    assert i.get("x") is i.get("tokens") and i.get("x").name == "tokens"
    assert i.last_assigned == "x"


def test_out_is_reserved_at_the_top_level_too() -> None:
    # A difference from the original, which binds `out = 3;` at the top level (docs/language.md,
    # section 7): here only statements bind it.
    with pytest.raises(RaspNameError, match="Cannot set reserved name: out") as caught:
        run("out = 3;")
    # `out` is a reserved word, not a built-in or library name: the hint says so
    assert caught.value.hint is not None and "'out' is a reserved word" in caught.value.hint


@pytest.mark.parametrize("word", ["get", "zip", "len"])
def test_a_reserved_word_is_called_one_in_the_hint(word: str) -> None:
    with pytest.raises(RaspNameError) as caught:
        run(f"{word} = 3;")
    assert caught.value.hint == f"'{word}' is a reserved word of RASP; choose another name"


def test_selector_application_gives_a_matrix() -> None:
    i = Interpreter()
    (r,) = i.exec_program(parse("select(indices, indices, ==)([1, 2]);"))
    assert isinstance(r.values[0], np.ndarray) and r.values[0].tolist() == [
        [True, False],
        [False, True],
    ]


_APPLIED = 'w = select(indices, indices, <)("ab");\nv = indices("abc");\n'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # an evaluated selector's truth was numpy's "truth value ... is ambiguous" (an internal
        # error for and/or/if), and `in` showed its multi-line numpy text
        ("w and w;", "Cannot apply and to evaluated selector: {0: [0, 0], 1: [1, 0]}"),
        ("w or 1;", "Cannot apply or to evaluated selector"),
        ("not w;", "Cannot apply not to evaluated selector"),
        ("1 if w else 2;", "the condition of 'if' cannot be an evaluated selector"),
        ("w in [1];", "Cannot apply in to evaluated selector"),
        ("1 in [w];", "Cannot apply in to a list holding an evaluated selector"),
        ("[w] == [w];", "Cannot apply == to a list holding an evaluated selector"),
        ("{1: w} != {1: w};", "Cannot apply != to a dict holding an evaluated selector"),
        ("x = indices == [w];", "Cannot apply == to a list holding an evaluated selector"),
        ("x = [w][indices];", "Cannot apply an s-op index to a list holding an evaluated"),
        # an evaluated s-op: Python's words about our class, or a truth that is always True
        ("x = indices + v;", "Cannot apply + to evaluated s-op: [0, 1, 2] (ints)"),
        ("v and 1;", "Cannot apply and to evaluated s-op"),
        ("not v;", "Cannot apply not to evaluated s-op"),
        ("1 if v else 2;", "the condition of 'if' cannot be an evaluated s-op"),
        ("[v] < [v];", "Cannot apply < to a list holding an evaluated s-op"),
        ("x = aggregate(full_s, indices, [v]);", "Expected atom, got: [[0, 1, 2] (ints)]"),
        ("tokens([v]);", "an input token cannot be an evaluated s-op"),
    ],
)
def test_an_applied_sop_or_selector_is_no_operand(text: str, message: str) -> None:
    with pytest.raises(RaspTypeError) as caught:
        run(_APPLIED + text)
    error = caught.value
    assert message in error.message
    assert error.hint is not None and "then apply" in error.hint
    assert error.span is not None and error.span.line == 3
    assert not any(word in error.render() for word in ("SeqValue", "ndarray", "internal"))


def test_repl_commands_are_returned_not_run() -> None:
    i = Interpreter()
    (r,) = i.exec_program(parse('set example "ab"'))
    assert r.kind is ResultKind.COMMAND and isinstance(r.values[0], ast.ReplCommand)
    assert r.values[1] == "ab"


def test_draw_result() -> None:
    (r,) = Interpreter().exec_program(parse('draw(indices + 1, "abc");'))
    assert r.kind is ResultKind.DRAW and isinstance(r.values[0], SOp) and r.values[1] == "abc"


def test_reserved_names() -> None:
    for name in [
        "count",
        "length",
        "selector_width",
        "indices",
        "tokens_int",
        "True",
        "full_s",
        "sort",
    ]:
        with pytest.raises(RaspNameError, match=f"Cannot set reserved name: {name}"):
            run(f"{name} = 3;")
    i = run("tokens = tokens_int;")  # tokens is an ordinary variable
    assert i.get("tokens") is i.get("tokens_int")


def test_unknown_name_suggests_a_close_one() -> None:
    with pytest.raises(RaspNameError) as info:
        run("x = indeces + 1;")
    assert info.value.message == "Undefined variable: indeces"
    assert info.value.hint == "did you mean 'indices'?"
    assert info.value.span is not None and info.value.span.text() == "indeces"
    with pytest.raises(RaspNameError) as info:
        run("x = noret;")  # difflib's ratio suggested 'sort'
    assert info.value.hint is None


def test_arity_error_points_at_the_call() -> None:
    with pytest.raises(RaspArityError) as info:
        run("def f(a, b) { return a; }\nx = f(1);")
    assert info.value.message == "wrong number of args for f- expected: 2, got: 1."
    assert info.value.span is not None and info.value.span.text() == "f(1)"
    with pytest.raises(RaspArityError):
        run("x = tokens(1, 2);")


@pytest.mark.parametrize(
    ("program", "error", "message"),
    [
        ("x = aggregate(indices, tokens);", RaspTypeError, "Expected selector, got: indices"),
        ("x = select(indices, indices, ==) + 1;", RaspTypeError, "Cannot apply + to selector(s)"),
        (
            "x = select(indices, indices, ==) and tokens;",
            RaspTypeError,
            "between selector and non-selector",
        ),
        ("x = indicator(3);", RaspTypeError, "indicator operator expects s-op, got: 3"),
        ("x = aggregate(full_s, tokens, tokens);", RaspTypeError, "Expected atom, got: tokens"),
        ("x = select([1], indices, ==);", RaspTypeError, "Expected s-op or atom"),
        ('x = 1 + "a";', RaspTypeError, "unsupported operand"),
        ("x = 1 / 0;", RaspRuntimeError, "division by zero"),
        ("x = 3(4);", RaspTypeError, "cannot call"),
        ("x = [1][3];", RaspRuntimeError, "out of range"),
        ("x = range(1.5);", RaspTypeError, "integer"),
        ("x = 2 ^ 100000000;", RaspRuntimeError, "too large"),
        # Python's words were "(34, 'Numerical result out of range')", as in the original
        ("x = 10.0 ^ 400;", RaspRuntimeError, "10.0 ^ 400 is too large for a float"),
        ("x = 2 ^ 1024.5;", RaspRuntimeError, "2 ^ 1024.5 is too large for a float"),
        # Python's words were "int too large to convert to float", naming no operation
        ("x = 10 ^ 400 * 10.0;", RaspRuntimeError, "a 401-digit number * 10.0 is too large"),
        ("x = 10 ^ 400 / 3;", RaspRuntimeError, "a 401-digit number / 3 is too large for a"),
        ("x = 0.5 - 10 ^ 400;", RaspRuntimeError, "0.5 - a 401-digit number is too large"),
        ("x = 10 ^ 400 % 2.0;", RaspRuntimeError, "a 401-digit number % 2.0 is too large"),
        ("x = 10 ^ 400 + 0.5;", RaspRuntimeError, "a 401-digit number + 0.5 is too large"),
        ("x = range(10000000);", RaspRuntimeError, "longer than"),
        # its length was an internal error (OverflowError: len() of a range past sys.maxsize)
        ("x = range(10 ^ 400);", RaspRuntimeError, "a range longer than 100000 items"),
        ("x = len(range(5, 10 ^ 30));", RaspRuntimeError, "a range longer than 100000 items"),
        ("def f(x) { return f(x); } x = f(1);", RaspRuntimeError, "deeper than"),
        ("x = len(3);", RaspTypeError, "non-list"),
        ("for a, b in [1] { }", RaspTypeError, "single value"),
        ("x = tokens if select(1, 1, ==) else 1;", RaspTypeError, "selector"),
        # an s-op with a function operand failed when evaluated, in Python's words naming our
        # class ("unsupported operand type(s) for /: 'int' and 'RaspFunction'")
        (
            "def f(a) { return a; } x = indices / f;",
            RaspTypeError,
            "Cannot apply / to function: function f(a)",
        ),
        ("x = selector_width < tokens;", RaspTypeError, "Cannot apply < to function"),
        # a list comparison and an s-op value holding one named our classes, with their reprs
        (
            "def f(a) { return a; } x = [f] >= [1];",
            RaspTypeError,
            "'>=' not supported between a function and a number",
        ),
        (
            'def f(a) { return a; } x = {"a": f}[tokens]("a");',
            RaspRuntimeError,
            "s-op values must be ints, floats, strings or bools, got function f(a) at position 0",
        ),
        (
            'x = [[1, indices]][indices - indices]("a");',
            RaspRuntimeError,
            "got list: [1, indices] at position 0",
        ),
    ],
)
def test_wrong_kinds_are_located_errors(program: str, error: type[RaspError], message: str) -> None:
    with pytest.raises(error, match=None) as info:
        run(program)
    assert message in info.value.message
    assert info.value.span is not None


def test_a_float_overflow_at_a_position_names_the_operation() -> None:
    i = run("y = tokens_float * (10 ^ 400);")
    with pytest.raises(RaspRuntimeError) as info:
        evaluate(i.get("y"), ["1"])
    assert info.value.message.startswith("1.0 * a 401-digit number is too large for a float")
    assert "position 0" in (info.value.hint or "")


@pytest.mark.parametrize("values", ["indices + 10 ^ 400", "(indices + 1) * 10 ^ 308"])
def test_a_mean_past_the_float_range_is_a_located_error(values: str) -> None:
    """A mean of whole numbers whose sum no float holds was an internal error (OverflowError:
    "int too large to convert to float"); the original fails there too."""
    i = run(f"y = aggregate(select(indices, indices, <=), {values});")
    with pytest.raises(RaspRuntimeError) as info:
        evaluate(i.get("y"), ["a", "b"])
    assert info.value.message.startswith("the mean of 2 selected values, whose sum is a ")
    assert info.value.message.endswith("is too large for a float (the largest is about 1.8e308)")
    assert info.value.span is not None and info.value.span.col == 5


def test_a_mean_of_floats_beside_a_whole_number_past_the_float_range_is_a_located_error() -> None:
    """A float column holding a whole number past float's range (2 ^ 1100 beside 0.5) made
    numpy's float array raise OverflowError: an internal error; Python's sum fails there too."""
    i = run(
        'v = 2 ^ 1100 if tokens == "a" else 0.5; y = aggregate(select(indices, indices, <=), v, 0);'
    )
    assert list(evaluate(i.get("y"), ["b", "b"]).values) == [0.5, 0.5]
    with pytest.raises(RaspRuntimeError) as info:
        evaluate(i.get("y"), ["a", "b"])
    assert info.value.message.startswith("the mean of 2 selected values adds a float to a whole")
    assert info.value.span is not None


def test_evaluation_errors_point_at_the_node() -> None:
    i = run("y = 1 / indices;")
    with pytest.raises(RaspRuntimeError) as info:
        evaluate(i.get("y"), "ab")
    assert info.value.message == "division by zero"
    assert info.value.span is not None and info.value.span.text() == "1 / indices"


def test_names_and_get() -> None:
    i = run("mine = 1;")
    names = i.names()
    assert {"mine", "tokens", "indices", "length", "sort", "selector_width"} <= set(names)
    assert i.get("mine") == 1


def test_tokens_kinds() -> None:
    assert seq("x = tokens_int + 1;", ["1", "2"]) == [2, 3]
    assert seq("x = tokens_float / 2;", ["1"]) == [0.5]
    assert seq("x = tokens_asis;", [1, 2]) == [1, 2]
    with pytest.raises(RaspRuntimeError, match="tokens_int"):
        seq("x = tokens_int;", "ab")


def test_snapshot_and_restore_undo_top_level_bindings() -> None:
    i = run("a = 1;")
    saved = i.snapshot()
    run("a = 2; b = 3;", i)
    assert i.user_names() == ["a", "b"] and i.last_assigned == "b"
    i.restore(saved)
    assert i.get("a") == 1 and i.user_names() == ["a"] and i.last_assigned == "a"


def test_a_multi_assignment_binds_the_names_before_a_reserved_one() -> None:
    """As the original's assign, which binds each name in turn and fails at a reserved one
    (session multi_assign_reserved): `a` is bound, `c` after `count` is not."""
    i = Interpreter()
    with pytest.raises(RaspNameError, match="reserved name: count"):
        run("a, count, c = 1, 2, 3;", i)
    assert i.get("a") == 1
    with pytest.raises(RaspNameError):
        i.get("c")


def test_inputs_keep_their_names_when_assigned() -> None:
    # The original's tests/in/stay_constant.txt: b keeps the old value when a is rebound.
    i = run("a = 4; b = a; a = 3; c = indices; d = c; c = c + 1; tokens = tokens_int;")
    assert (i.get("a"), i.get("b")) == (3, 4)
    assert i.get("d") is i.get("indices") and i.get("indices").name == "indices"
    assert list(evaluate(i.get("c"), "ab").values) == [1, 2]
    assert i.get("tokens_int").name == "tokens"  # as the original's `tokens = tokens_str;`
