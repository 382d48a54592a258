"""What running a statement reports (`StatementResult`), and saved bindings (`Bindings`).

Re-exported by `rasp.interpreter`; kept apart so the interpreter module stays one job.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from rasp import ast
from rasp.errors import RaspError, RaspSyntaxError, Span


class ResultKind(Enum):
    ASSIGN = "assign"
    EXPR = "expr"
    DEF = "def"
    FOR = "for"
    LOAD = "load"
    DRAW = "draw"
    COMMAND = "command"


@dataclass(frozen=True)
class StatementResult:
    """What one top-level statement did. EXPR: `names` is `(name,)` for a bare name, `("out",)` for
    another expression and `()` for an application `f(input)` (its value is the evaluated result).
    DRAW: `values` is `(sop,)` or `(sop, input)`. COMMAND: `values[0]` is the `ast.ReplCommand`,
    and for `set example E` `values[1]` is E's value."""

    kind: ResultKind
    names: tuple[str, ...]
    values: tuple[Any, ...]
    span: Span


@dataclass(frozen=True)
class ReplLoading:
    """How the REPL runs the files a statement loads, as the original's does: a failing statement
    (a syntax error too) is appended to `errors`, located in its file, and skipped, and the load
    goes on. `watch` sees each statement's result, a REPL command's too (`set example` in a loaded
    file sets the session's example), and refuses one by raising a RaspError: the statement then
    binds nothing, as if it had failed. `entered` and `left` are called as each load starts and
    ends (its statements run, before its names are copied and listed). `check` tests a value on
    the running example without listing it (raising as `watch` does): a name the caller
    reserves is tested so before the file binds it, as the original tests every value first.
    `failed` sees each failing statement (not a syntax error) and its error."""

    watch: Callable[[StatementResult], None]
    errors: list[RaspError] = field(default_factory=list)
    check: Callable[[StatementResult], None] = lambda _result: None
    entered: Callable[[], None] = lambda: None
    left: Callable[[], None] = lambda: None
    # a statement that failed (before its error is appended to `errors`): the REPL remembers the
    # names it would have bound, to say why a later use finds them undefined
    failed: Callable[[ast.Stmt, RaspError], None] = lambda _stmt, _error: None
    # a statement that did not parse (before it is appended to `errors`), likewise
    unparsed: Callable[[RaspSyntaxError], None] = lambda _error: None


@dataclass(frozen=True)
class Bindings:
    """A copy of an interpreter's top-level names (see `Interpreter.snapshot`)."""

    values: dict[str, Any]
    last_assigned: str | None
    spans: dict[str, Span] = field(default_factory=dict)


@dataclass(frozen=True)
class Mark:
    """Where an `Interpreter.recording` stood, for `Interpreter.undo`: positions in what it
    recorded, not a copy of the names."""

    bindings: int
    last_assigned: str | None
    renames: int
