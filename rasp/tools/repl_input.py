"""Whether the lines typed so far end a statement, for `rasp.tools.repl.ReplSession.feed`: a
`def` or `for` block still open, a REPL command on its own line, a line that no statement could
continue, a line of nothing but comments."""

from __future__ import annotations

from rasp import ast
from rasp.errors import RaspSyntaxError
from rasp.parser import open_block, open_bracket, parse, starts_command

__all__ = ["breaks", "is_blank", "is_command", "open_block", "open_bracket"]


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
