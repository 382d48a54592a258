"""`rasp.text_width`: terminal columns, the measure every aligned table and caret pads by."""

from __future__ import annotations

import pytest

from rasp.text_width import clip, display_width, ljust, rjust

# (text, columns): ASCII, CJK and fullwidth forms (2 each), halfwidth katakana (1), Hangul
# syllables (2), a combining accent and a variation selector (0), an emoji with a skin tone (2)
WIDTHS = [
    ("abc", 3),
    ("日本語", 6),
    ("ＡＢ", 4),
    ("ｱｲｳ", 3),
    ("한국어", 6),
    ("e\u0301", 1),
    ("x\ufe0f", 1),
    ("\U0001f44d\U0001f3fd", 2),
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


def test_padding_and_clipping_are_by_columns() -> None:
    assert ljust("日本", 6) == "日本  " and rjust("日本", 6) == "  日本"
    assert ljust("abc", 2) == "abc"  # never cut, as str.ljust
    assert clip("abcdef", 4) == "abc…" and clip("abcd", 4) == "abcd"
    assert clip("日本語日本語", 7) == "日本語…"  # 6 columns + the mark
    assert display_width(clip("日本語日本語", 6)) <= 6
