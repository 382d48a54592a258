"""`rasp.text_width`: terminal columns, the measure every aligned table and caret pads by."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rasp.text_width import clip, display_width, ljust, rjust
from rasp.text_wrap import UNBROKEN, expand_tabs, wrap_kept

# (text, columns): ASCII, CJK and fullwidth forms (2 each), halfwidth katakana (1), Hangul
# syllables (2), a combining accent and a variation selector (0), an emoji with a skin tone (2),
# a soft hyphen (1, as terminals draw it)
WIDTHS = [
    ("abc", 3),
    ("日本語", 6),
    ("ＡＢ", 4),
    ("ｱｲｳ", 3),
    ("한국어", 6),
    ("e\u0301", 1),
    ("x\ufe0f", 1),
    ("\U0001f44d\U0001f3fd", 2),
    # sequences drawn as one picture: emoji joined by U+200D, a symbol made an emoji by U+FE0F
    # (not a check mark: it has no emoji form), a keycap, a syllable in conjoining jamo
    ("\U0001f468\u200d\U0001f469\u200d\U0001f467", 2),
    ("\U0001f3f3\ufe0f\u200d\U0001f308", 2),
    ("\u2764\ufe0f", 2),
    ("\u2713\ufe0f", 1),
    ("1\ufe0f\u20e3", 2),
    ("\u1100\u1161\u11a8", 2),
    ("\xad", 1),
    ("a\tb", 2),  # a control character takes no column of its own
    ("", 0),
]


@pytest.mark.parametrize(("text", "columns"), WIDTHS)
def test_display_width_counts_terminal_columns(text: str, columns: int) -> None:
    assert display_width(text) == columns


@pytest.mark.parametrize(("text", "columns"), [(t, c) for t, c in WIDTHS if "\t" not in t])
def test_display_width_agrees_with_wcwidth(text: str, columns: int) -> None:
    # wcwidth (prompt_toolkit's measure) is the reference; the core measures with the standard
    # library because it may add no dependency
    wcwidth = pytest.importorskip("wcwidth")
    assert display_width(text) == wcwidth.wcswidth(text)


def test_the_emoji_style_table_agrees_with_wcwidth() -> None:
    # every one-column character of the symbol blocks, with U+FE0F after it: two columns exactly
    # where wcwidth's table of emoji variation sequences says so
    wcwidth = pytest.importorskip("wcwidth")
    chars = [
        chr(c) for c in [*range(0x20, 0x100), *range(0x2000, 0x2C00), *range(0x1F000, 0x1FB00)]
    ]
    styled = [c + "\ufe0f" for c in chars if display_width(c) == 1 == wcwidth.wcswidth(c)]
    assert len(styled) > 1000
    assert [t for t in styled if display_width(t) != wcwidth.wcswidth(t)] == []


def test_padding_and_clipping_are_by_columns() -> None:
    assert ljust("日本", 6) == "日本  " and rjust("日本", 6) == "  日本"
    assert ljust("abc", 2) == "abc"  # never cut, as str.ljust
    assert clip("abcdef", 4) == "abc…" and clip("abcd", 4) == "abcd"
    assert clip("日本語日本語", 7) == "日本語…"  # 6 columns + the mark
    assert display_width(clip("日本語日本語", 6)) <= 6
    assert clip("\u2764\ufe0f\u2764\ufe0fab", 5) == "\u2764\ufe0f\u2764\ufe0f…"  # (2 columns each)


# ------------------------------------------------------------------------------------------------
# `rasp.text_wrap.wrap_kept`: textwrap's lines, measured in columns


def _textwrap(text: str, width: int, initial: str = "", subsequent: str = "") -> list[str]:
    lines = textwrap.wrap(
        text,
        width,
        initial_indent=initial,
        subsequent_indent=subsequent,
        break_long_words=False,
        break_on_hyphens=False,
    )
    return [line.replace(UNBROKEN, " ") for line in lines]


@settings(max_examples=400, deadline=None, derandomize=True)
@given(
    text=st.text(alphabet=st.sampled_from("ab c-\t\n`,[]" + UNBROKEN), max_size=60),
    width=st.integers(1, 30),
    initial=st.sampled_from(["", " ", "    "]),
    subsequent=st.sampled_from(["", "  ", "      "]),
)
def test_wrap_kept_is_textwraps_where_every_character_takes_one_column(
    text: str, width: int, initial: str, subsequent: str
) -> None:
    assert wrap_kept(text, width, initial, subsequent) == _textwrap(
        text, width, initial, subsequent
    )


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    text=st.text(alphabet=st.sampled_from("a 日\u0301👍ｱ,\u200d"), max_size=80),
    width=st.integers(4, 30),
)
def test_wrap_kept_fits_every_line_but_a_lone_word(text: str, width: int) -> None:
    lines = wrap_kept(text, width, "", "  ")
    assert " ".join(lines).split() == text.split()
    assert all(display_width(line) <= width or " " not in line.strip() for line in lines)


def test_wrap_kept_counts_columns() -> None:
    text = "、".join(["日本語の文字"] * 6)  # (no space: one word)
    assert wrap_kept(text, 20) == [text]  # never broken: a line of its own, past the edge
    items = ", ".join(["'日本語'", "'中文字符'", "'한국어'", "'e\u0301moji 👍🏽'"] * 3)
    lines = wrap_kept(items, 24, "", "  ")
    assert all(display_width(line) <= 24 for line in lines), lines
    assert " ".join(lines).split() == items.split()
    assert lines[:2] == ["'日本語', '中文字符',", "  '한국어', 'e\u0301moji 👍🏽',"]
    # a tab goes to its stop by columns
    assert (
        expand_tabs("日\tx") == "日      x" and expand_tabs("ab\tc\n\td") == "ab      c\n        d"
    )
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # (one picture, two columns)
    assert expand_tabs(family + "\tx") == family + "      x"
