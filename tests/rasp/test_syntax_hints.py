"""Syntax errors that name the mistake: typographic characters by code point, Python and tracr
habits, misspelt forms and commands, number literals, a missing value, `in` or bracket, and strings
without escapes (test_errors.py has the golden rendered errors)."""

from __future__ import annotations

import pytest

from rasp.errors import RaspError, RaspSyntaxError
from rasp.interpreter import Interpreter
from rasp.parser import parse
from rasp.sops import evaluate


@pytest.mark.parametrize(
    ("text", "message", "hint"),
    [
        ("x\u00a0= tokens;", "U+00A0 (no-break space)", "write a plain space"),
        (
            "x = tokens == \u201ca\u201d;",
            "U+201C (left double quotation mark)",
            "write a straight double quote",
        ),
        (
            "x = tokens == \u2018a\u2019;",
            "U+2018 (left single quotation mark)",
            "write a straight double quote",
        ),
        ("x = indices \u2212 1;", "U+2212 (minus sign)", "write -"),
        ("s = select(indices, indices, \u2264);", "U+2264 (less-than or equal to)", "write <="),
        ("x = tokens;\u200b", "U+200B (zero width space)", "it is invisible: delete it"),
    ],
)
def test_a_typographic_character_is_named_by_its_code_point(
    text: str, message: str, hint: str
) -> None:
    # It was "unexpected character '\xa0'" (a repr that reads as a space) with no hint.
    with pytest.raises(RaspSyntaxError) as info:
        parse(text, "pasted.rasp")
    assert str(info.value) == f"unexpected character {message}"
    assert info.value.hint is not None and info.value.hint.startswith(hint)


@pytest.mark.parametrize(
    ("text", "message", "hint", "col"),
    [
        # they were "'if' is a keyword and cannot be used as a name" and "expected ';' after the
        # statement" (at `True`)
        ("if x > 0 { y = 1; }", "RASP has no 'if' statement", "an if is an expression", 1),
        ("x = 1; if x { y = 1; }", "RASP has no 'if' statement", "an if is an expression", 8),
        ("while True { y = 1; }", "RASP has no while loop", "for i in range(n) { ... }", 1),
        ("def f(a) { while a { b = 1; } return a; }", "RASP has no while loop", "for i in", 12),
        # they were "expected ';' after the statement" (at `reverse`)
        ("import reverse;", "RASP has no 'import'", 'load "reverse"; runs reverse.rasp', 1),
        ("x = 1; from sort import sort;", "RASP has no 'from'", 'load "sort";', 8),
    ],
)
def test_a_python_statement_rasp_lacks_is_named(
    text: str, message: str, hint: str, col: int
) -> None:
    with pytest.raises(RaspSyntaxError) as info:
        parse(text, "habit.rasp")
    assert str(info.value) == message
    assert info.value.hint is not None and hint in info.value.hint
    assert info.value.span is not None and info.value.span.col == col


@pytest.mark.parametrize(
    ("text", "col"),
    [("x = [i for i in range(3) if i > 0];", 26), ('d = {k: 1 for k in "ab" if k};', 25)],
)
def test_a_comprehension_filter_is_named(text: str, col: int) -> None:
    # It was "unexpected ']'" with the hint "expected 'else'" (the original's grammar has no filter).
    with pytest.raises(RaspSyntaxError) as info:
        parse(text, "comp.rasp")
    assert str(info.value) == "a comprehension has no 'if' filter"
    assert info.value.hint is not None and "[x if x > 0 else 0 for x in l]" in info.value.hint
    assert info.value.span is not None and info.value.span.col == col


def test_while_and_if_as_names_are_not_habits() -> None:
    parse("while = 1; x = while + 1; y = 1 if while else 2;", "names.rasp")
    parse("import = 1; from = import + 1;", "names.rasp")


@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        ("load reverse;", 'load "reverse";'),
        ("load(reverse);", 'load "reverse";'),
        ('load("lib/sort");', 'load "lib/sort";'),
        ("load;", 'load "FILE";'),
    ],
)
def test_a_load_without_quotes_shows_them(text: str, quoted: str) -> None:
    # the hint was "expected a string"
    with pytest.raises(RaspSyntaxError) as info:
        parse(text, "load.rasp")
    assert info.value.hint == f"load takes the file's name in quotes: {quoted}"


@pytest.mark.parametrize(
    ("text", "char"),
    [("\u00e9 = 3;", "\u00e9"), ("na\u00efve = 3;", "\u00ef"), ("x = \u03b1;", "\u03b1")],
)
def test_a_letter_outside_ascii_says_what_a_name_is_made_of(text: str, char: str) -> None:
    # It was "unexpected character 'é'" with no hint (the original: "token recognition error").
    with pytest.raises(RaspSyntaxError) as info:
        parse(text, "names.rasp")
    assert str(info.value) == f"unexpected character {char!r}"
    assert (
        info.value.hint == "a name is made of ASCII letters, digits and '_' (a string may hold any)"
    )


@pytest.mark.parametrize(
    ("text", "message", "caret"),
    [
        ("y = indices >> 1;", "RASP has no '>>' (shift)", "^~"),
        ("y = indices << 1;", "RASP has no '<<' (shift)", "^~"),
        ("y = indices == 1 || indices == 2;", "RASP writes 'or', not '||'", "^~"),
        ("y = indices | 1;", "RASP writes 'or', not '|'", "^"),
        ("y = indices & 1;", "RASP writes 'and', not '&'", "^"),
        ("y = categorical aggregate(select(indices, 0, ==), tokens);", "no 'categorical'", "^~~~"),
        ("y = (indices).f;", "RASP has no attributes or methods ('.')", "^"),
        ("y = 5.;", "a float needs digits on both sides of '.'", "^"),
        ("y = f(indices, indices, <);", "'<' on its own is not a value", "^"),
    ],
)
def test_python_and_tracr_habits_are_named(text: str, message: str, caret: str) -> None:
    with pytest.raises(RaspSyntaxError) as info:
        parse(text, "habit.rasp")
    lines = info.value.render().splitlines()
    assert message in lines[0] and lines[2].strip().startswith(caret)
    assert info.value.hint, "each habit's error says what RASP writes instead"


@pytest.mark.parametrize(
    ("text", "message", "hint"),
    [
        ("select(indices, indices, lt);", "'lt'", "did you mean '<'?"),
        ("select(indices, indices, GEQ);", "'GEQ'", "did you mean '>='?"),
        ("select(indices, indices, Comparison.NEQ);", "'Comparison.NEQ'", "did you mean '!='?"),
        ("select(indices, indices, TRUE);", "'TRUE'", "full_s, select(1, 1, ==)"),
        ("select(indices, indices, rasp.Comparison.FALSE);", "'rasp.Comparison.FALSE'",
         "select(1, 0, ==)"),
        ("select(indices, indices, Comparison.foo);", "'Comparison.foo'", "takes one of =="),
    ],
)  # fmt: skip
def test_a_comparison_written_as_a_word_says_which_operator(
    text: str, message: str, hint: str
) -> None:
    """tracr's Comparison names (and its TRUE/FALSE selectors) are named in RASP's terms, with the
    caret under the whole dotted name."""
    with pytest.raises(RaspSyntaxError) as info:
        parse(f"x = {text}", "word.rasp")
    lines = info.value.render().splitlines()
    assert lines[0].endswith(f"error: unknown comparison {message}")
    assert lines[2].strip() == "^" + "~" * (len(message) - 3)
    assert hint in (info.value.hint or "")


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("sho example", "did you mean the REPL command show [s-op|selector] example?"),
        ("x = 1; exmaples off", "did you mean the REPL command [s-op|selector] examples on|off?"),
        ("full seq on", "did you mean the REPL command full seq display on|off?"),
        ("foo bar;", "every statement ends with ';'"),
        ("x = y z;", "every statement ends with ';'"),
    ],
)
def test_a_misspelt_repl_command_is_named(text: str, hint: str) -> None:
    # (`sho example` said only that every statement ends with ';')
    with pytest.raises(RaspSyntaxError) as info:
        parse(text, "<repl>")
    assert info.value.message == "expected ';' after the statement"
    assert (info.value.hint or "").startswith(hint)


@pytest.mark.parametrize(
    "text", ["r = aggregate(select(indices, 0, ==), tokens));", "x = [1, 2]];", "x = (1));"]
)
def test_one_closer_too_many_is_unmatched(text: str) -> None:
    # (it said "expected ';' after the statement", with the caret on the extra closer)
    with pytest.raises(RaspSyntaxError) as info:
        parse(text, "extra.rasp")
    closer = text[-2]
    assert info.value.message == f"unmatched '{closer}'"
    assert info.value.span is not None and info.value.span.col == len(text) - 1


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ("x = 1 +\n)", "expected an operand after '+'", 2),
        ("x = 1 +\n);", "expected an operand after '+'", 2),
        ("x = 1 + );", "expected an operand after '+'", 1),
        ("x = );", "expected a value after '='", 1),
    ],
)
def test_a_closer_where_a_value_is_missing_names_the_missing_value(
    text: str, message: str, line: int
) -> None:
    # (`x = 1 +` then `)` said "unmatched ')'", of a closer after a dangling '+')
    with pytest.raises(RaspSyntaxError) as info:
        parse(text, "missing.rasp")
    assert info.value.message == message
    assert info.value.span is not None and info.value.span.line == line


@pytest.mark.parametrize("name", ["select", "aggregate", "range", "zip", "len"])
def test_a_built_in_form_without_its_call_says_how_to_call_it(name: str) -> None:
    # `x = select;` suggested 'selector_width', `x = range;` 'average'
    with pytest.raises(RaspError) as info:
        Interpreter().exec_program(parse(f"x = {name};", "form.rasp"))
    assert info.value.message == f"Undefined variable: {name}"
    assert (info.value.hint or "").startswith(f"'{name}' is a built-in form, not a value; call")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("y = aggregate(s, tokens, 0, 1);", "too many arguments: 'aggregate(' takes 2 or 3"),
        ("y = select(indices, indices, ==, 1);", "too many arguments: 'select(' takes 3"),
    ],
)
def test_too_many_arguments_to_select_or_aggregate(text: str, message: str) -> None:
    # (it said "expected ')' to close 'aggregate('", as if the ',' were the mistake)
    with pytest.raises(RaspSyntaxError) as info:
        parse(text, "extra.rasp")
    assert info.value.message.startswith(message) and info.value.span is not None
    assert info.value.span.col == text.rindex(",") + 1


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("y = selct(indices, indices, ==);", "did you mean 'select('? select(keys, queries, OP)"),
        ("y = slect(indices, indices, <);", "did you mean 'select('? select(keys, queries, OP)"),
        ("y = Select(indices, indices, <);", "did you mean 'select('? RASP's built-ins are lower"),
        ("y = f(indices, indices, <);", "select(keys, queries, OP) takes one of"),
        ("y = sort(indices, indices, <);", "select(keys, queries, OP) takes one of"),
    ],
)
def test_a_misspelt_select_is_named(text: str, hint: str) -> None:
    # `selct(..., ==)` fails at the '==' (no other call takes one): say which call was meant
    with pytest.raises(RaspSyntaxError) as info:
        parse(text, "typo.rasp")
    assert (info.value.hint or "").startswith(hint)


@pytest.mark.parametrize(
    ("text", "literal", "caret", "written"),
    [
        ("y = indices * 1e3;", "1e3", "^~~", "1000.0"),
        ("y = [0.1, 2.5e10];", "2.5e10", "^~~~~~", "25000000000.0"),
        ("y = 1e-3;", "1e-3", "^~~~", "0.001"),
        ("y = 1E+2 + 1;", "1E+2", "^~~~", "100.0"),
        ("y = 0x10;", "0x10", "^~~~", "16"),
        ("y = 1_000;", "1_000", "^~~~~", "1000"),
    ],
)
def test_a_python_number_literal_is_written_out(
    text: str, literal: str, caret: str, written: str
) -> None:
    # `1e3` said only "expected ';' after the statement", under the 'e3'.
    with pytest.raises(RaspSyntaxError) as info:
        parse(text, "number.rasp")
    lines = info.value.render().splitlines()
    assert f"RASP has no number literal '{literal}'" in lines[0]
    assert lines[2].strip() == caret
    assert info.value.hint == f"write the number out: {written}"


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("y = 1e999;", "it is too large for a float; RASP writes numbers as digits"),
        ("y = 1e30;", "compute it: 1 * 10 ^ 30"),
        (
            "y = 1e-400;",
            "it is too small for a float (0.0 is the nearest); RASP writes numbers as digits",
        ),
        ("y = 2.5E-40;", "compute it: 2.5 * 10 ^ -40"),
    ],
)
def test_a_number_literal_too_long_to_write_out(text: str, hint: str) -> None:
    # the hint said "write the number out: Infinity.0", or gave 31 digits
    with pytest.raises(RaspSyntaxError) as info:
        parse(text, "number.rasp")
    assert info.value.hint == hint


@pytest.mark.parametrize(
    ("text", "message", "hint"),
    [
        ("y = if 1 else 2;", "an expression cannot start with 'if'", "conditional puts the value"),
        ("y = (else 2);", "an expression cannot start with 'else'", "conditional puts the value"),
        ("y = [for x in [1]];", "an expression cannot start with 'for'", "[x + 1 for x in l]"),
        ("y = {for x in [1]};", "an expression cannot start with 'for'", "{x: x + 1 for x in l}"),
        ("y = [1, for x in l];", "an expression cannot start with 'for'", "a loop is a"),
        ("y = [1, for];", "'for' is a keyword and cannot be used as a name", "choose another"),
        ("if = 1;", "'if' is a keyword and cannot be used as a name", "choose another name"),
        ("def f(x) { for = 1; return x; }", "'for' is a keyword and cannot", "choose another"),
    ],
)
def test_a_clause_keyword_where_a_value_belongs(text: str, message: str, hint: str) -> None:
    # `y = if 1 else 2;` said "'if' is a keyword and cannot be used as a name"
    with pytest.raises(RaspSyntaxError) as info:
        parse(text, "clause.rasp")
    assert message in info.value.render().splitlines()[0]
    assert hint in (info.value.hint or "")


def test_names_a_habit_only_where_it_is_one() -> None:
    # A user's own name `numerical` is a name like any other; `x.5` is a float's error.
    interpreter = Interpreter()
    interpreter.exec_program(parse("numerical = indices + 1; y = numerical * 2;", "ok.rasp"))
    assert evaluate(interpreter.get("y"), "ab").values == (2, 4)
    with pytest.raises(RaspSyntaxError, match="digits on both sides"):
        parse("y = 1 + .5;", "float.rasp")


@pytest.mark.parametrize(
    ("text", "message", "hint"),
    [
        ("x = tokens +;", "expected an operand after '+'", "remove the '+'"),
        ("x = not;", "expected an operand after 'not'", "write a value after 'not'"),
        ("x = indices == ;", "expected an operand after '=='", "write a value after '=='"),
        ("x = ;", "expected a value after '='", "name = value;"),
        ("x = [1, 2,];", "expected a value after ','", "remove the ','"),
        ("x = select(indices, ;", "expected an argument after ','", "takes 3 arguments"),
        ("x = select(indices, indices;", "'select(' takes 3 arguments", "select(keys, queries"),
        ("x = select(indices, indices);", "'select(' takes 3 arguments", "OP one of"),
        ("x = select(indices indices, ==);", "'select(' takes 3 arguments", "OP one of"),
        ("x = aggregate(select(indices, 0, ==));", "'aggregate(' takes 2 or 3", "default"),
    ],
)
def test_a_missing_value_is_not_an_empty_statement(text: str, message: str, hint: str) -> None:
    with pytest.raises(RaspSyntaxError) as info:
        parse(text, "missing.rasp")
    assert message in info.value.message and hint in (info.value.hint or "")
    assert "empty" not in info.value.render()


@pytest.mark.parametrize("text", [";", "x = indices + 1;;", "def f(x) { y = x;; return y; }"])
def test_an_empty_statement_is_named_so(text: str) -> None:
    with pytest.raises(RaspSyntaxError) as info:
        parse(text, "empty.rasp")
    assert info.value.message == "unexpected ';'"
    assert info.value.hint == "a statement cannot be empty"


def test_an_argument_of_a_call_with_any_count_is_closed_by_its_bracket() -> None:
    # f(a b) may end after a: only select and aggregate need a ',' there.
    with pytest.raises(RaspSyntaxError) as info:
        parse("x = aggregate(select(indices, 0, ==), tokens 0);", "call.rasp")
    assert info.value.message == "expected ',' or ')' to close 'aggregate('"


def test_a_stray_semicolon_elsewhere_says_what_was_expected() -> None:
    with pytest.raises(RaspSyntaxError) as info:
        parse("x, ;", "names.rasp")
    assert info.value.message == "unexpected ';'" and info.value.hint == "expected a name"


@pytest.mark.parametrize(
    ("text", "col", "hint"),
    [
        ("for x [1, 2] { y = x; }", 7, "for x in list { ... }"),
        ("for x, y [[1, 2]] { z = x; }", 10, "for x in list { ... }"),
        ("for x y { z = x; }", 7, "for x in list { ... }"),
        ("z = [x for x [1]];", 14, "[f(x) for x in list]"),
    ],
)
def test_a_loop_without_in_says_in_is_missing(text: str, col: int, hint: str) -> None:
    # Lark's expected set there read "expected ')', ',', 'in'", as if ')' might do
    with pytest.raises(RaspSyntaxError) as info:
        parse(text, "loop.rasp")
    assert info.value.message.startswith("expected 'in' before ")
    assert info.value.span is not None and info.value.span.col == col
    assert hint in (info.value.hint or "") and "')'" not in info.value.render()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('"a\\"b";', "expected ';' after the statement"),
        ('x = "a\\"";', "unterminated string"),
        ('f("a\\"b");', "expected ',' or ')' to close the call 'f('"),
    ],
)
def test_a_backslash_before_a_quote_is_not_an_escape(text: str, message: str) -> None:
    with pytest.raises(RaspSyntaxError) as info:
        parse(text, "escape.rasp")
    assert info.value.message == message
    assert (info.value.hint or "").startswith("RASP strings have no escapes")


def test_a_string_ending_in_a_backslash_is_fine_and_not_blamed() -> None:
    with pytest.raises(RaspSyntaxError) as info:
        parse('x = "a\\"; y = 1 +;', "escape.rasp")
    assert "escape" not in (info.value.hint or "")


@pytest.mark.parametrize(
    ("text", "slice_"),
    [
        ("y = tokens[1:];", True),
        ("y = tokens[:-1];", True),
        ("y = range(4)[1:3];", True),
        ('y = "abc"[1:];', True),
        ("y = [1:2];", False),  # a list's '[', not an index: no slice was meant
    ],
)
def test_a_python_slice_is_named(text: str, slice_: bool) -> None:
    with pytest.raises(RaspSyntaxError) as info:
        parse(text, "slice.rasp")
    assert (str(info.value) == "RASP has no slices ('x[a:b]')") is slice_
