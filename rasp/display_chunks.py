"""A table of positions (a selector's grid, `full seq display`'s rows) fitted to a terminal.

A table wider than the terminal would wrap each row into the next, its columns no longer under
each other. So where the REPL knows its terminal's width, such a table is shown in chunks of
positions, each chunk a table of its own under a heading that says which positions it holds
(`keys 0-14 of 26:` for a grid, whose rows, the queries, are all in every chunk). Every value is
shown; nothing is cut. Without a width (a pipe, the goldens), or where the table fits, it is as
the original prints it, byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable

from rasp.text_width import line_columns

# the lines of positions lo..hi-1 of the table
Render = Callable[[int, int], list[str]]
# the line above the chunk of positions lo..hi-1 of n
Heading = Callable[[int, int, int], str]


def fitted(
    n: int, render: Render, heading: Heading, width: int | None, measure: Render | None = None
) -> list[str]:
    """The table of `n` positions (`render(0, n)`), or, where a line of it is wider than
    `width`, its chunks: as many positions each as fit (at least one), each under its heading.
    `measure(lo, hi)` gives the lines as wide as the chunk's widest (by default all of them: a
    grid's header and first row are enough, where its every row is as wide)."""
    measure = measure or render
    if width is None or fits(measure(0, n), width):
        return render(0, n)
    lines: list[str] = []
    lo = 0
    while lo < n:
        hi = lo + 1  # (one position wider than the terminal is shown all the same)
        while hi < n and fits(measure(lo, hi + 1), width):
            hi += 1
        lines += [heading(lo, hi, n), *render(lo, hi)]
        lo = hi
    return lines


def fits(lines: list[str], width: int) -> bool:
    """Whether every line of `lines` fits in `width` columns."""
    return all(line_columns(line) <= width for line in lines)


def span_text(lo: int, hi: int, n: int) -> str:
    """`0-14 of 26` (positions lo..hi-1), `25 of 26` for one."""
    shown = f"{lo}" if hi - lo == 1 else f"{lo}-{hi - 1}"
    return f"{shown} of {n}"
