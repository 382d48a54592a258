"""How the REPL's reports fit a terminal: `:verify`'s and `:compile`'s lines, `:residual`'s
headings and cells, and `draw(...)`'s tab-indented lines, wrapped to the session's width as its
messages are (`Diagnostic.render(width=...)`); width None (a pipe, the goldens) changes nothing.

A line keeps its indentation (tabs too, counted to the next multiple of 8 as a terminal shows
them), and its later lines hang under its value: under `  orders:     16 runs ...`'s `16`, else two
columns in. A source line with a caret line under it (an error inside a report) is never cut,
nor is a word (a path, a list with no spaces) or a `code span` (a command to type).
"""

from __future__ import annotations

import re

from rasp.text_width import display_width, line_columns
from rasp.text_wrap import UNBROKEN, keep_code_spans, wrap_indented, wrap_kept

# `  exhaustive: ...`, `first failing input: ...`: a label its value's later lines hang under
_LABEL = re.compile(r"[A-Za-z][\w .()-]{0,23}:( +|$)")
_NOT_LABELS = ("error:", "warning:", "note:")  # a message's later lines indent two, as Diagnostic's
_CARET = re.compile(r"\s*\^~*\s*$")


def wrap_report(text: str, width: int | None) -> str:
    """`text`, each line wrapped to `width` columns (None: as it is)."""
    if width is None:
        return text
    lines = text.split("\n")
    out: list[str] = []
    for k, line in enumerate(lines):
        carets = _CARET.fullmatch(line) or (k + 1 < len(lines) and _CARET.fullmatch(lines[k + 1]))
        out += [line] if carets else wrap_line(line, width)
    return "\n".join(out)


def wrap_line(line: str, width: int, hang: int | None = None) -> list[str]:
    """One line wrapped to `width` columns: its later lines start with its own indentation and
    then `hang` more columns (by default under its label's value, else 2)."""
    body = line.lstrip(" \t")
    prefix = line[: len(line) - len(body)]
    column = line_columns(prefix)
    if line_columns(line) <= width or not body:
        return [line]
    if hang is None:
        label = _LABEL.match(body)
        hang = 2 if label is None or body.startswith(_NOT_LABELS) else display_width(label[0])
        if column + hang > width // 2:  # (a long label: its value would be a narrow column)
            hang = 2
    return wrap_indented(prefix + kept_whole(body), width, hang)


def kept_whole(text: str) -> str:
    """`text` with the spaces textwrap must not break at (nor drop there) made unbreakable: a
    `code span`'s, and a space that is a value (`[a,  , b]`, ` ` between two commas)."""
    return re.sub(r"(?<=[\[,]) (?=[,\]])|(?<=, ) (?=[,\]])", UNBROKEN, keep_code_spans(text))


def fill_cell(text: str, width: int) -> list[str]:
    """A table cell's text in lines of at most `width` columns (a longer word stays whole)."""
    return wrap_kept(kept_whole(text), width) or [""]


# the one-line values the original's display prints (` \t Example: r("hello") = [...]`,
# `\t =  [...]`, `     list: x = [...]`, `show example`'s, an unnamed s-op's label in a list,
# `s-op: (indices * 1000)`); a selector's grid and full seq rows are tables, left as they are
_VALUE_LINE = re.compile(  # (\t*: inside a list's lines)
    r"\t*(?: \t Example:|\t =  |\t(?:s-op|selector) example: )"
    r"|\s*(?:list|dict|value|console function|s-op|selector): "
)


def wrap_values(lines: list[str], width: int | None) -> list[str]:
    """A statement's value lines, each one-line value wrapped to `width` (None: as they are)."""
    if width is None:
        return lines
    return [
        part
        for line in lines
        for part in (wrap_line(line, width) if _VALUE_LINE.match(line) else [line])
    ]
