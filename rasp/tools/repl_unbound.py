"""Names whose statement failed in the REPL, so that a later use of one says why it is unbound.

The REPL binds nothing when a statement fails (the original's definition-time check), so a later
`m = n + 1;` or `:compile n` met only "Undefined variable: n" (and a hint about the built-in
`length`), though the cause was the statement before. `FailedNames` remembers, for each name still
unbound, the statement that would have bound it and why it failed (or that it never ran: an
earlier statement of its line failed, or its entry, or its statement in a loaded file, did not
parse), and `explain` says so in place of "Undefined variable".

An entry that does not parse has no statements to read names from: only the names of a leading
`NAME =` (or `A, B =`) or `def NAME(` are taken from its text, which the entry binds whatever
follows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rasp import ast
from rasp.errors import RaspError, RaspSyntaxError, Span
from rasp.text_width import clip
from rasp.tools.repl_example_check import ON_EXAMPLE
from rasp.values import RESERVED_WORDS, UndefinedName

# how much of a statement's text and a failure's message the explanation quotes (one line each)
STATEMENT_COLUMNS = 60
REASON_COLUMNS = 100

# an entry's leading `NAME =` or `A, B =` (not `==`), or `def NAME(`, after blank and comment lines
_LEADING_NAMES = re.compile(
    r"(?:\s*#[^\n]*)*\s*(?:(?P<names>[A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*=(?!=)"
    r"|(?P<def>def\s+(?P<func>[A-Za-z_]\w*)\s*\())",
    re.ASCII,
)

# a name's value, None where it is unbound (`Interpreter.value`)
ValueOf = Callable[[str], Any]


@dataclass(frozen=True)
class Unbound:
    """Why a name is unbound: `statement`, quoted, failed with `reason`, or did not run because
    `blocker`, an earlier statement of its line, failed. `where`: `file:line` in a loaded file,
    "" for a typed statement (the REPL numbers each entry's lines from 1)."""

    statement: str
    where: str
    reason: str = ""
    blocker: str = ""
    on_example: bool = False  # it failed on the running example (`ExampleCheck`)
    # "assigning" or "defining" where `statement` is an entry that did not parse (`reason`: why)
    unparsed: str = ""
    error_line: int = 0  # in a loaded file's statement that did not parse: its error's line


class FailedNames:
    """The names the session's failed statements left unbound, with why."""

    def __init__(self) -> None:
        self._unbound: dict[str, Unbound] = {}

    def line_failed(
        self, stmts: Sequence[ast.Stmt], k: int, err: RaspError, value_of: ValueOf
    ) -> None:
        """Typed statement `stmts[k]` failed with `err` (explained here first): the names it
        assigns are remembered, and those of the statements after it on the line, which did not
        run; only names still unbound (a `for` keeps what its body bound before)."""
        self.explain(err)
        self._failed(stmts[k], err, value_of)
        for stmt in stmts[k + 1 :]:
            why = Unbound(_quoted(stmt.span), _where(stmt.span), blocker=_quoted(stmts[k].span))
            for name in _assigned(stmt, value_of):
                self._unbound[name] = why

    def parse_failed(self, text: str, err: RaspError, value_of: ValueOf) -> None:
        """Typed entry `text` did not parse (`err`), so none of it ran: the names its leading
        `NAME =` or `def NAME(` binds, still unbound, are remembered (others cannot be read
        soundly from text that does not parse)."""
        reason = self._reason(err)
        if err.span is not None and len(text.splitlines()) > 1:
            reason = f"line {err.span.line}: {reason}"
        self._unparsed(text, "", reason, value_of)

    def load_unparsed(self, err: RaspSyntaxError) -> None:
        """A loaded file's statement did not parse (`ReplLoading.unparsed`; `err.statement` its
        first line and text): as `parse_failed`, located `file:line` (the names the session
        holds after the load are forgotten then, as `load_failed`'s are)."""
        if err.statement is None or err.span is None:
            return
        first, text = err.statement
        where = f"{err.span.file}:{first}"  # (moved to the leading name's line below)
        self._unparsed(text, where, self._reason(err), None, error_line=err.span.line)

    def _unparsed(
        self,
        text: str,
        where: str,
        reason: str,
        value_of: ValueOf | None,
        error_line: int = 0,
    ) -> None:
        leading = _LEADING_NAMES.match(text)
        if leading is None:
            return
        start = leading.start("names" if leading["names"] else "def")  # (its comments left out)
        if where:  # the statement's own line, past the blank and comment lines before it
            file, _, first = where.rpartition(":")
            where = f"{file}:{int(first) + text.count(chr(10), 0, start)}"
        verb = "assigning" if leading["names"] else "defining"
        why = Unbound(
            _quoted_text(text[start:]), where, reason=reason, unparsed=verb, error_line=error_line
        )
        names = leading["names"].split(",") if leading["names"] else [leading["func"]]
        for name in dict.fromkeys(n.strip() for n in names):
            if name not in RESERVED_WORDS and (value_of is None or value_of(name) is None):
                self._unbound[name] = why

    def load_failed(self, stmt: ast.Stmt, err: RaspError) -> None:
        """A loaded file's statement failed (`ReplLoading.failed`): as `line_failed`, but which
        of a `for`'s names are bound in the file's scope is not known here, so none of them."""
        self.explain(err)
        self._failed(stmt, err, None)

    def _failed(self, stmt: ast.Stmt, err: RaspError, value_of: ValueOf | None) -> None:
        why = Unbound(
            _quoted(stmt.span),
            _where(stmt.span),
            reason=self._reason(err),
            on_example=ON_EXAMPLE in (err.hint or ""),
        )
        for name in _assigned(stmt, value_of):
            self._unbound[name] = why

    def forget_bound(self, value_of: ValueOf) -> None:
        """A statement ran: the names it bound are no longer unbound (few are remembered)."""
        for name in [n for n in self._unbound if value_of(n) is not None]:
            del self._unbound[name]

    def explain(self, err: RaspError) -> RaspError:
        """`err`, where it is `Undefined variable: NAME` for a name remembered here, saying which
        statement failed to bind it and how to fix it (its location stays the use's)."""
        if not isinstance(err, UndefinedName) or err.name not in self._unbound:
            return err
        why = self._unbound[err.name]
        at = f" ({why.where})" if why.where else ""
        if why.unparsed and why.where:  # a loaded file's statement
            file = why.where.rpartition(":")[0]
            err.message = (
                f"`{err.name}` is not defined: the statement {why.unparsed} it, "
                f"{why.statement}{at}, did not parse ({why.reason}), so it did not run"
            )
            err.hint = f"fix its syntax at {file}:{why.error_line} and load {file} again"
        elif why.unparsed:
            err.message = (
                f"`{err.name}` is not defined: the entry {why.unparsed} it, {why.statement}, did "
                f"not parse ({why.reason}), so none of it ran"
            )
            err.hint = "fix its syntax and enter it again"
        elif why.blocker:
            err.message = (
                f"`{err.name}` is not defined: {why.statement}{at} did not run, because "
                f"{why.blocker} before it on its line failed"
            )
            err.hint = "enter it again (the statements after a failing one on its line are skipped)"
        else:
            err.message = (
                f"`{err.name}` is not defined: its statement {why.statement}{at} failed "
                f"({why.reason}), so it was not bound"
            )
            again = (
                f" in {why.where.rpartition(':')[0]} and load it" if why.where else " and enter it"
            )
            example = (
                " (or first `set example ...` to an input it works on)" if why.on_example else ""
            )
            err.hint = f"fix that statement{again} again{example}"
        return err

    def _reason(self, err: RaspError) -> str:
        """The failure's message, its first line, shortened; "`NAME` is not defined" where it was
        itself a use of a name remembered here (explained where that name is used)."""
        if isinstance(err, UndefinedName) and err.name in self._unbound:
            return f"`{err.name}` is not defined"
        lines = str(err).splitlines() or [""]
        return clip(lines[0], REASON_COLUMNS)


def _assigned(stmt: ast.Stmt, value_of: ValueOf | None) -> list[str]:
    """The names `stmt` binds at its level and has not (where `value_of` tells): an assignment's
    targets, a def's name, and, only where `value_of` tells which of them its earlier iterations
    bound, a `for`'s targets and its body's."""
    match stmt:
        case ast.Assign(targets=targets):
            names = list(targets)
        case ast.FuncDef(name=name):
            names = [name]
        case ast.For(targets=targets, body=body) if value_of is not None:
            names = [*targets, *(n for inner in body for n in _assigned(inner, None))]
        case _:
            return []
    return [n for n in dict.fromkeys(names) if value_of is None or value_of(n) is None]


def _quoted(span: Span) -> str:
    """A statement's text on one line, shortened, in backquotes."""
    return _quoted_text(span.text())


def _quoted_text(text: str) -> str:
    return f"`{clip(' '.join(text.split()), STATEMENT_COLUMNS)}`"


def _where(span: Span) -> str:
    return "" if span.file == "<repl>" else f"{span.file}:{span.line}"
