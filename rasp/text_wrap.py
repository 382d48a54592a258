"""Text wrapped to a terminal's width, with what must stay on one line kept whole: a `code
span` (a command to type), and whatever a caller marks with UNBROKEN (a value that is a space,
`[a,  , b]`; a `|` between two words of `:help`). Never a word broken, nor at a hyphen.

Widths are terminal columns (`rasp.text_width`), not characters: `日` takes two, a combining
accent none. `textwrap` counts characters, so a line of CJK text it wrapped to 60 ran to 120
columns; `wrap_kept` is textwrap's greedy algorithm (`break_long_words=False`,
`break_on_hyphens=False`) measuring columns, and gives textwrap's lines wherever every character
takes one column (tests/rasp/test_text_width.py compares the two).
"""

from __future__ import annotations

import re

from rasp.text_width import TAB, char_widths, display_width, line_columns

UNBROKEN = "\xa0"  # a break falls at ASCII whitespace only: a space it must keep

_WHITESPACE = "\t\n\x0b\x0c\r "  # (textwrap's: the only places a line may break)
_SPACES = re.compile(f"([{re.escape(_WHITESPACE)}]+)")
_TO_SPACE = str.maketrans(dict.fromkeys(_WHITESPACE, " "))


def keep_code_spans(text: str) -> str:
    """`text` with each `code span`'s spaces made UNBROKEN."""
    return re.sub(r"`[^`\n]*`", lambda m: m.group(0).replace(" ", UNBROKEN), text)


def wrap_kept(text: str, width: int, initial: str = "", subsequent: str = "") -> list[str]:
    """One line of `text` wrapped to `width` columns, its UNBROKEN spaces spaces again (none
    where the line is blank). A word wider than its line is not broken: it takes a line of its
    own, past the edge."""
    if width <= 0:
        raise ValueError(f"invalid width {width!r} (must be > 0)")
    chunks = [c for c in _SPACES.split(expand_tabs(text).translate(_TO_SPACE)) if c]
    chunks.reverse()  # (a stack: the next chunk is the last)
    lines: list[str] = []
    while chunks:
        indent = subsequent if lines else initial
        room = width - display_width(indent)
        if lines and not chunks[-1].strip():  # (a line starts at a word, but the text's first)
            chunks.pop()
        line: list[str] = []
        used = 0
        while chunks and used + display_width(chunks[-1]) <= room:
            used += display_width(chunks[-1])
            line.append(chunks.pop())
        if not line and chunks:  # a word wider than any line: alone on one
            line.append(chunks.pop())
        if line and not line[-1].strip():
            line.pop()
        if line:
            lines.append(indent + "".join(line))
    return [line.replace(UNBROKEN, " ") for line in lines]


def wrap_indented(line: str, width: int, hang: int = 2) -> list[str]:
    """`line` wrapped to `width` columns (`wrap_kept`), its later lines starting with its own
    indentation (its tabs kept) and then `hang` more columns; a line that fits, as it is."""
    body = line.lstrip(" \t")
    if line_columns(line) <= width or not body:
        return [line]
    prefix = line[: len(line) - len(body)]
    column = line_columns(prefix)
    # wrapped after as many spaces as the prefix takes, which are then the prefix again
    wrapped = wrap_kept(body, width, " " * column, " " * (column + hang))
    return [prefix + text[column:] for text in wrapped]


def expand_tabs(text: str) -> str:
    """`text.expandtabs()` by columns: a tab after `日` goes to the stop 8 columns from the start
    of its line as a terminal shows it, not 8 characters."""
    if "\t" not in text:
        return text
    out: list[str] = []
    column = 0
    for char, columns in zip(text, char_widths(text), strict=True):
        if char == "\t":
            step = TAB - column % TAB
            out.append(" " * step)
            column += step
        else:
            out.append(char)
            column = 0 if char in "\n\r" else column + columns
    return "".join(out)
