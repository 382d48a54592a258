"""Whether the lines typed so far end a statement, for `rasp.tools.repl.ReplSession.feed`: a
`def` or `for` block still open, a REPL command on its own line, a line that no statement could
continue, a line of nothing but comments."""

from __future__ import annotations

import re

from rasp import ast
from rasp.errors import RaspError, RaspSyntaxError
from rasp.parser import open_block, open_bracket, parse, starts_command
from rasp.sources import decode_source

__all__ = ["breaks", "is_blank", "is_command", "not_utf8", "open_block", "open_bracket"]

# A byte that is not UTF-8, as a reader with errors="surrogateescape" gives it
_NOT_UTF8 = re.compile("[\udc80-\udcff]")


def not_utf8(line: str, *, width: int | None = None) -> str | None:
    """The located error of a line holding a byte that is not UTF-8 (never a token or a name),
    in `rasp run -`'s words (wrapped to `width`, as `Diagnostic.render`); None for text."""
    if not _NOT_UTF8.search(line):
        return None
    try:
        decode_source(line.encode("utf-8", "surrogateescape"), "<repl>")
    except RaspError as err:
        err.message = err.message.replace("the program is", "the line is", 1)
        err.hint = "type or pipe UTF-8 text"
        return err.render(width=width)
    return None  # (unreachable: a surrogate-escaped byte never decodes)


def is_command(line: str) -> bool:
    """Whether `line` is a REPL command on its own (`exit`, `quit;`, `set example "ab"`, ...)."""
    if not starts_command(line):  # (no parse for each line of a long statement)
        return False
    try:
        program = parse(line, "<repl>")
    except RaspSyntaxError:
        return False
    return len(program.statements) == 1 and isinstance(program.statements[0], ast.ReplCommand)


def breaks(pending: list[str], line: str) -> bool:
    """Whether `line` makes the unfinished statement a syntax error (it is no continuation)."""
    try:
        parse("\n".join([*pending, line]), "<repl>")
    except RaspSyntaxError as exc:
        return not exc.incomplete
    return False


def is_blank(text: str) -> bool:
    return all(not line.strip() or line.strip().startswith("#") for line in text.splitlines())
