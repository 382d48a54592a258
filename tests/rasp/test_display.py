"""Value display in the original RASP REPL's look, and JSON for `--json`.

The expected strings are the original's, checked character by character (tabs and the spaces that
Python's `print` puts between arguments included).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rasp.display import (
    ExampleSettings,
    applied_value,
    atom_text,
    example_lines,
    full_seq_rows,
    literal_text,
    named_value,
    selector_grid,
    seq_json,
    seq_text,
    values_text,
)
from rasp.sops import (
    Comparison,
    IndicesSOp,
    LengthSOp,
    MapSOp,
    Select,
    SeqType,
    SeqValue,
    TokenKind,
    TokensSOp,
    make_seq,
)


def _reverse() -> MapSOp:
    # Stands in for `rev`: reverses "hello" without attention, enough to test the display.
    return MapSOp(fn=lambda t, i: "hello"[4 - i], inputs=(TokensSOp(), IndicesSOp()), text="rev")


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1.0"),
        (2 / 3, "0.667"),
        (True, "T"),
        (False, "F"),
        ("a", "a"),
        (7, "7"),
        (np.int64(3), "3"),
    ],
)
def test_atom_text(value: object, text: str) -> None:
    assert atom_text(value) == text


def test_values_text_compresses_only_runs_of_identical_values() -> None:
    assert values_text([5, 5, 5]) == "[5]*3"
    assert values_text([5]) == "[5]"
    assert values_text([1, 2]) == "[1, 2]"
    # equal as numbers: the original's set() keeps one, and it shows the first
    assert values_text([4.0, 4]) == "[4.0]*2"
    assert values_text([1, True]) == "[1]*2"
    assert values_text(["1", 1]) == "[1, 1]"
    assert values_text([]) == "[]"


def test_seq_text_has_type_label() -> None:
    assert seq_text(SeqValue(tuple("olleh"), SeqType.STRINGS)) == "[o, l, l, e, h] (strings)"
    assert seq_text(SeqValue((0.5, 1 / 3), SeqType.FLOATS)) == "[0.5, 0.333] (floats)"
    assert seq_text(SeqValue((True, False), SeqType.BOOLS)) == "[T, F] (bools)"


def test_literal_text_quotes_top_level_strings_and_reprs_elements() -> None:
    assert literal_text("u") == '"u"'
    assert literal_text(3) == "3"
    assert literal_text([1, "a", 2.5]) == "[1, 'a', 2.5]"
    assert literal_text({"1": 1, 2: [True]}) == "{'1': 1, 2: [True]}"
    assert literal_text((1, 2)) == "[1, 2]"  # a RASP list, however the interpreter stores it


def test_named_sop_with_example_line() -> None:
    lines = named_value("rev", _reverse(), ExampleSettings())
    assert lines == ["     s-op: rev", ' \t Example: rev("hello") = [o, l, l, e, h] (strings)']


def test_named_sop_without_examples() -> None:
    assert named_value("rev", _reverse(), ExampleSettings(show_seq=False)) == ["     s-op: rev"]


def test_named_selector_grid_is_the_originals() -> None:
    prevs = Select(IndicesSOp(), IndicesSOp(), Comparison.LT)
    assert named_value("prevs", prevs, ExampleSettings()) == [
        "     selector: prevs",
        " \t Example:",
        " \t\t\t     h e l l o",
        " \t\t\t h |          ",
        " \t\t\t e | 1        ",
        " \t\t\t l | 1 1      ",
        " \t\t\t l | 1 1 1    ",
        " \t\t\t o | 1 1 1 1  ",
    ]


def test_selector_grid_aligns_multi_character_tokens() -> None:
    grid = selector_grid(["the", "a"], np.array([[True, False], [True, True]]))
    assert grid == [
        " \t\t\t       the a",
        " \t\t\t the | 1      ",
        " \t\t\t   a | 1   1  ",
    ]
    # Every cell of a row starts in its label's column.
    header, *rows = grid
    assert rows[1].index("1", rows[1].index("|") + 2) == header.index("the")


def test_selector_grid_and_full_seq_align_wide_tokens_by_columns() -> None:
    # `日` is one character but two terminal columns: padded by characters, every column after
    # it drifted one to the left
    from rasp.text_width import display_width

    grid = selector_grid(["日", "x"], np.array([[True, False], [False, True]]))
    assert grid[1:] == [" \t\t\t 日 | 1    ", " \t\t\t  x |    1 "]
    header = grid[0]
    cell = grid[2].index("1", grid[2].index("|") + 2)
    assert display_width(grid[2][:cell]) == display_width(header[: header.index("x")])
    seq = SeqValue(values=("日", "x"), type=SeqType.STRINGS)
    rows = full_seq_rows(["日", "x"], seq)
    assert rows == [" \t\tinput:   日  x \t (strings)", " \t\toutput:  日  x \t (strings)"]


def test_values_atoms_lists_dicts() -> None:
    assert named_value("n", 3, ExampleSettings()) == ["    value: n =  3"]
    assert named_value("s", "u", ExampleSettings()) == ['    value: s =  "u"']
    assert named_value("b", [5, 8, 2], ExampleSettings()) == ["     list: b = [5, 8, 2]"]
    assert named_value("d", {"1": 1, "2": 2}, ExampleSettings()) == [
        "     dict: d = {'1': 1, '2': 2}"
    ]


def test_function_header_comes_from_the_caller() -> None:
    lines = named_value(
        "f", object(), ExampleSettings(), function_text=lambda v: "console function: f(a, b)"
    )
    assert lines == ["     console function: f(a, b)"]


def test_list_holding_sops_prints_one_item_per_line() -> None:
    lines = named_value("l", [TokensSOp(name="tokens"), 1], ExampleSettings())
    assert lines == [
        "     list: l =  [",
        "\t\t     s-op: tokens",
        '\t\t \t Example: tokens("hello") = [h, e, l, l, o] (strings)',
        "\t\t    value:  1",
        "               ]",
    ]


def test_full_seq_display_rows() -> None:
    is_l = MapSOp(fn=lambda t: t == "l", inputs=(TokensSOp(),))
    lines = named_value("is_l", is_l, ExampleSettings(full_seq=True))
    assert lines == [
        "     s-op: is_l",
        " \t Example:",
        " \t\tinput:   h e l l o \t (strings)",
        " \t\toutput:      T T   \t (bools)",  # only the rarer bool value is marked
    ]


@pytest.mark.parametrize(
    ("values", "seq_type", "row"),
    [
        # the original counts the values equal to True and to False (`list.count`), not the
        # truthy ones: 1.5 is neither, so F (2) is the commoner and only T is marked, 1.5 with it
        ((False, 1.5, 1.5, False), SeqType.FLOATS, "    T T   "),
        # 0 counts as False: one True, one False, both marked; 2 is truthy, marked T
        ((True, 2, 0), SeqType.INTS, "  T T F "),
    ],
)
def test_full_seq_display_marks_bools_by_equality_as_the_original(
    values: tuple[object, ...], seq_type: SeqType, row: str
) -> None:
    seq = SeqValue(values=values, type=seq_type)
    rows = full_seq_rows(["a"] * len(values), seq)
    assert rows[1] == f" \t\toutput:{row}\t ({seq_type.value})"


def test_full_seq_display_right_aligns_and_types_the_input() -> None:
    times = MapSOp(fn=lambda t: t * 10, inputs=(TokensSOp(kind=TokenKind.INT),))
    lines = named_value("x", times, ExampleSettings(seq_example=[1, 2, 3], full_seq=True))
    assert lines[2:] == [" \t\tinput:    1  2  3 \t (ints)", " \t\toutput:  10 20 30 \t (ints)"]


def test_full_seq_display_skips_identical_values() -> None:
    lines = named_value("n", LengthSOp(), ExampleSettings(full_seq=True))
    assert (
        lines[1]
        == ' \t Example: n("hello") = [5]*5 (ints) [skipped full display: identical values]'
    )


def test_applied_values() -> None:
    assert applied_value(SeqValue(tuple("cba"), SeqType.STRINGS), list("abc")) == [
        "\t =  [c, b, a] (strings)"
    ]
    grid = applied_value(np.eye(2, dtype=bool), ["a", "b"])
    assert grid == ["\t = ", " \t\t\t     a b", " \t\t\t a | 1  ", " \t\t\t b |   1"]


def test_show_example_lines() -> None:
    assert example_lines("both", "hey", [1, 2]) == [
        '\ts-op example: "hey"',
        "\tselector example: [1, 2]",
    ]
    assert example_lines("selector", "hey", "hi") == ['\tselector example: "hi"']


def test_seq_json_keeps_json_types() -> None:
    assert seq_json(SeqValue((1, 2), SeqType.INTS)) == "[1, 2]"
    assert seq_json(SeqValue((0.5, 2.0), SeqType.FLOATS)) == "[0.5, 2.0]"
    assert seq_json(SeqValue(("a", "é"), SeqType.STRINGS)) == '["a", "é"]'
    assert seq_json(SeqValue((True, False), SeqType.BOOLS)) == "[true, false]"
    assert seq_json(SeqValue((float("inf"),), SeqType.FLOATS)) == "[null]"


_same_type_lists = st.one_of(
    st.lists(st.integers(-(10**6), 10**6), min_size=1, max_size=8),
    st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=8),
    st.lists(st.text(max_size=3), min_size=1, max_size=8),
    st.lists(st.booleans(), min_size=1, max_size=8),
)


@settings(max_examples=100, derandomize=True, deadline=None)
@given(_same_type_lists)
def test_seq_json_round_trips_exactly(values: list[object]) -> None:
    seq = make_seq(values)
    parsed = json.loads(seq_json(seq))
    assert parsed == values
    assert [type(v) for v in parsed] == [type(v) for v in values]
