"""How many terminal columns text takes, for every aligned table and caret the tools print.

`len` counts characters, but a terminal gives a CJK character or a fullwidth form two columns and
a combining accent none, so `str.ljust` and `f"{s:<10}"` misaligned the `:residual` table, the
selector grids and `rasp show`'s tables as soon as a token was `日` (one character, two columns).
Every such table pads with `ljust` / `rjust` here instead.

The widths follow Unicode's East Asian Width property and general categories (what the wcwidth
package does for single characters) through the standard library: the core may add no dependency
(docs/architecture.md). Emoji sequences joined by U+200D may show narrower than counted here.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

# Characters a terminal draws on the one before them, or not at all: nonspacing and enclosing
# marks (accents, variation selectors), format characters (zero-width joiner, bidi marks) and
# control characters.
_ZERO_WIDTH_CATEGORIES = frozenset({"Mn", "Me", "Cf", "Cc"})
_EMOJI_MODIFIERS = range(0x1F3FB, 0x1F400)  # skin tones: drawn on the emoji before them


TAB = 8  # the columns a terminal's tab stops are apart


@lru_cache(maxsize=4096)
def char_width(char: str) -> int:
    """0, 1 or 2: the columns one character takes."""
    if unicodedata.category(char) in _ZERO_WIDTH_CATEGORIES or ord(char) in _EMOJI_MODIFIERS:
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def display_width(text: str) -> int:
    """The columns `text` takes in a terminal: `len(text)` for ASCII, 2 per CJK character."""
    if text.isascii() and text.isprintable():
        return len(text)
    return sum(char_width(c) for c in text)


def ljust(text: str, width: int) -> str:
    """`text` padded with spaces on the right to `width` columns (`str.ljust` by columns)."""
    return text + " " * (width - display_width(text))


def rjust(text: str, width: int) -> str:
    """`text` padded with spaces on the left to `width` columns (`str.rjust` by columns)."""
    return " " * (width - display_width(text)) + text


def clip(text: str, width: int, mark: str = "…") -> str:
    """`text` if it fits in `width` columns, else its longest start that fits with `mark` after it."""
    if display_width(text) <= width:
        return text
    room, kept = width - display_width(mark), []
    for char in text:
        room -= char_width(char)
        if room < 0:
            break
        kept.append(char)
    return "".join(kept) + mark


def printable(text: str) -> str:
    """`text` with each control or format character as its escape (`\\x1b`, `\\n`, `\\u202e`),
    for a terminal: a model file's strings cannot move the cursor, recolour the terminal, reorder
    text or add lines (`transformer.errors` keeps its own copy: the runtime imports no `rasp`)."""
    if text.isprintable():
        return text
    return "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text
    )


def line_columns(line: str) -> int:
    """The columns `line` takes on a terminal: a tab goes to its next stop, `日` takes two."""
    column = 0
    for part_index, part in enumerate(line.split("\t")):
        if part_index:
            column = (column // TAB + 1) * TAB
        column += display_width(part)
    return column
