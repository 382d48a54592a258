"""`%` with a string on its left formats (Python's `"<%s>" % x`), as in the original.

Where x is, or holds, an s-op, selector or function, the original formats its Python object's
text (`"<%s>" % tokens` is `"<UnfinishedSequence object, name: tokens id: 3>"`, `"%d" % indices`
fails), never the values: refused here, located, rather than given another meaning (an
elementwise map) or our classes' text (`"[IndicesSOp(name='indices')]"`). Found by gen_diff's
probes (gd53).
"""

from __future__ import annotations

import pytest

from rasp.tools.repl import ReplSession


def _feed(*lines: str) -> str:
    session = ReplSession()
    printed = ""
    for line in lines:
        printed = session.feed(line)
    return printed


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('"%d" % 2;', '"2"'),
        ('"a%sb" % 5;', '"a5b"'),
        ('"%s" % [1, 2];', '"[1, 2]"'),
        ('"%5.2f" % 3.14159;', '" 3.14"'),
        ('"%(a)s" % {"a": 1};', '"1"'),
    ],
)
def test_a_string_formats_atoms_lists_and_dicts_as_python_does(text: str, value: str) -> None:
    assert _feed(text) == f"    value: out =  {value}"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ('"<%s>" % tokens;', "an s-op"),
        ('"%d" % indices;', "an s-op"),
        ('"%s" % [indices];', "a list holding an s-op"),
        ('"%s" % {"a": [length]};', "a dict holding an s-op"),
        ('"%s" % [select(indices, indices, ==)];', "a list holding a selector"),
        ('"%s" % [sq];', "a list holding a function"),
        ('"%s" % [indices("ab")];', "a list holding an evaluated s-op"),
        ("tokens % [indices];", "a list holding an s-op"),
    ],
)
def test_formatting_an_s_op_selector_or_function_is_refused(text: str, kind: str) -> None:
    printed = _feed("def sq(x) { return x * x; }", text)
    first = printed.splitlines()[0]
    assert first == f"<repl>:1:1: error: Cannot format {kind} into a string with %", printed
    assert "Python object's text" in printed
    assert "internal error" not in printed


def test_a_string_s_op_still_formats_its_values_elementwise() -> None:
    printed = _feed('set example ["%d", "<%s>"]', "tokens % 7;")
    assert "Example: out(['%d', '<%s>']) = [7, <7>] (strings)" in printed


@pytest.mark.parametrize("text", ["tokens % indices;", "indices % (indices + 1);"])
def test_an_s_op_on_both_sides_is_still_elementwise(text: str) -> None:
    printed = _feed('set example ["%d", "<%s>"]', text)
    assert printed.startswith("     s-op: out"), printed


@pytest.mark.parametrize(
    "text",
    [
        '"%99999999999d" % 1;',  # was an internal error (MemoryError); the original fails too
        '"%200000s" % "a";',
        '"%.200000f" % 1.5;',
        '"%(a)99999s%(a)99999s" % {"a": 1};',
    ],
)
def test_a_formatted_string_is_capped_as_repeated_strings_are(text: str) -> None:
    printed = _feed(text)
    assert printed.splitlines()[0] == "<repl>:1:1: error: a string longer than 100000 items"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('"%d%% 2000000 items" % 5;', '"5% 2000000 items"'),
        ('"%%99999999d" % 5;', None),  # (a literal '%99999999d': too few arguments for none)
        ('"100%% of %d" % 3;', '"100% of 3"'),
    ],
)
def test_a_literal_percent_is_no_conversion_of_the_cap(text: str, value: str | None) -> None:
    """`%%` is a literal percent: the digits after it are no width (they were read as one and
    the format refused as 'a string longer than 100000 items')."""
    printed = _feed(text)
    assert "longer than" not in printed
    if value is not None:
        assert value in printed, printed


def test_a_mapping_key_in_parentheses_ends_at_its_match() -> None:
    """Python reads `%(a(b))` as the key 'a(b)': the width after it is still capped."""
    printed = _feed('"%(a(b))200000s" % {"a(b)": 1};')
    assert printed.splitlines()[0] == "<repl>:1:1: error: a string longer than 100000 items"


def test_a_format_s_overflow_keeps_pythons_words() -> None:
    """`%c` past Unicode is Python's OverflowError, no float's: it was worded as one."""
    printed = _feed('"%c" % (10 ^ 10);')
    assert printed.splitlines()[0] == "<repl>:1:1: error: %c arg not in range(0x110000)"


def test_a_string_s_op_formats_under_the_same_cap() -> None:
    printed = _feed('set example ["%200000s", "b"]', "tokens % 1;")
    assert "a string longer than 100000 items" in printed
    assert "internal error" not in printed


def test_a_width_of_thousands_of_digits_is_capped_before_it_is_read() -> None:
    """(Python reads no int of more than 4,300 digits)"""
    printed = _feed('"%" + "9" * 5000 + "d";', "out % 1;")
    assert printed.splitlines()[0] == "<repl>:1:1: error: a string longer than 100000 items"


@pytest.mark.parametrize(
    "lines",
    [
        ('"%(a)s" % {};',),  # was an internal error (KeyError); the original fails too
        ('set example ["%(a)s", "x"]', "tokens % {};"),
    ],
)
def test_a_format_key_missing_from_the_dict_is_located(lines: tuple[str, ...]) -> None:
    printed = _feed(*lines)
    assert "error: the format's key 'a' is not in the dict" in printed.splitlines()[0], printed
    assert "internal error" not in printed
