"""Text wrapped to a terminal's width by textwrap, with what must stay on one line kept whole:
a `code span` (a command to type), and whatever a caller marks with UNBROKEN (a value that is a
space, `[a,  , b]`; a `|` between two words of `:help`). Never a word broken, nor at a hyphen."""

from __future__ import annotations

import re
import textwrap

UNBROKEN = "\xa0"  # textwrap breaks at ASCII whitespace only: a space it must keep


def keep_code_spans(text: str) -> str:
    """`text` with each `code span`'s spaces made UNBROKEN."""
    return re.sub(r"`[^`\n]*`", lambda m: m.group(0).replace(" ", UNBROKEN), text)


def wrap_kept(text: str, width: int, initial: str = "", subsequent: str = "") -> list[str]:
    """One line of `text` wrapped to `width` columns, its UNBROKEN spaces spaces again (none
    where the line is blank)."""
    lines = textwrap.wrap(
        text,
        width,
        initial_indent=initial,
        subsequent_indent=subsequent,
        break_long_words=False,
        break_on_hyphens=False,
    )
    return [line.replace(UNBROKEN, " ") for line in lines]
