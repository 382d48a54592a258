"""The `load "file";` statement: the file found (`rasp.builtins.find_program`), its statements run
in a scope of their own (a file that loads itself, directly or through others, refused), and the
names it bound copied into the loading scope. In the REPL (`ReplLoading`) a failing statement, or
one with a syntax error, costs only itself and is reported there. Each loaded file is linted
(`rasp.lint`) once per text: its warnings wait in `warnings` for the front end to show.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from rasp import ast, builtins
from rasp.continuation import parse_recovering
from rasp.errors import Diagnostic, RaspError, RaspRuntimeError, RaspSyntaxError, Source, Span
from rasp.lint import lint
from rasp.parser import parse
from rasp.results import ReplLoading, ResultKind, StatementResult
from rasp.sources import read_source
from rasp.values import CopyRefused, Scope


@dataclass
class Frame:
    """Where statements run: a scope, whether it is a file's top level (for `last_assigned`),
    and the `def` whose call runs them (None outside one): an s-op named there is its local."""

    scope: Scope
    top: bool
    last: str | None = None
    function: str | None = None


def internal_error(exc: Exception, span: Span | None) -> RaspRuntimeError:
    """A bug of ours met at `span`, reported there (never a traceback)."""
    return RaspRuntimeError(f"internal error: {type(exc).__name__}: {exc}", span)


class Loads:
    """One interpreter's `load` statements. `run` runs a statement in a frame, `scope(label)` is a
    new file scope below the prelude, `renames()` counts the s-op renames so far and
    `unrename(n)` undoes those after the first n (the interpreter's)."""

    def __init__(
        self,
        run: Callable[[ast.Stmt, Frame], StatementResult],
        scope: Callable[[str], Scope],
        renames: Callable[[], int],
        unrename: Callable[[int], None],
    ) -> None:
        self.run, self.scope, self.renames, self.unrename = run, scope, renames, unrename
        self.loading: list[Path] = []  # the files whose loads are running, outermost first
        self.warnings: list[Diagnostic] = []  # the lint's, for the front end to take and show
        self._linted: set[tuple[str, str]] = set()  # (path, text): a load in a loop warns once
        # every warning of every file loaded so far, shown or not: a REPL's failing statement
        # of a file names one as its likely cause (rasp.tools.failure_warnings)
        self.linted: list[Diagnostic] = []

    def load(
        self,
        stmt: ast.Load,
        frame: Frame,
        search_dirs: Sequence[Path],
        repl: ReplLoading | None,
    ) -> StatementResult:
        """Run `load` statement `stmt` in `frame`: the file's statements in a scope of its own, then
        the names it bound copied into `frame`'s scope. `repl`: as `Interpreter.exec_statement`'s
        `repl_loading`."""
        path = builtins.find_program(stmt.path, stmt.span, search_dirs)
        if path in self.loading:
            depth = len(self.loading)
            raise RaspRuntimeError(
                f"'{stmt.path}' loads itself" + ("" if depth == 1 else f" (through {depth} loads)"),
                stmt.span,
            )
        try:
            # named as the user wrote it (the same file); its own loads look beside it
            source = read_source(builtins.shown_path(path, stmt.path))
            source = replace(source, loads_from=str(path.parent))
        except RaspError as exc:
            raise exc.with_span(stmt.span) from None  # unreadable: at the load; not UTF-8: in it
        statements = _loaded_statements(source, repl)
        if (str(path), source.text) not in self._linted:
            self._linted.add((str(path), source.text))
            found = lint(i for i in statements if not isinstance(i, RaspSyntaxError))
            self.warnings += found
            self.linted += found
        # labelled as the original names a loaded file's scope: the name as the load wrote it
        inner = Frame(self.scope(stmt.path), top=True)
        inner.scope.copied_to = frame.scope
        self.loading.append(path)
        if repl is not None:
            repl.entered()
        assigned_at: dict[str, int] = {}  # name -> the last statement that (re)bound it
        renamed_before = self.renames()
        try:
            for k, inner_stmt in enumerate(statements):
                if isinstance(inner_stmt, RaspSyntaxError):  # (only in the REPL)
                    repl.unparsed(inner_stmt)  # type: ignore[union-attr]
                    repl.errors.append(inner_stmt)  # type: ignore[union-attr]
                    continue
                if isinstance(inner_stmt, ast.ReplCommand) and repl is None:
                    continue  # no REPL to command
                with inner.scope.recording() as before:
                    renames = self.renames()
                    try:
                        result = self.run(inner_stmt, inner)
                        if repl is not None:
                            repl.watch(result)
                    except RecursionError:
                        raise  # (exec_statement says "nests too deeply")
                    except Exception as exc:
                        if repl is None:
                            raise
                        if not isinstance(exc, RaspError):  # a bug of ours: as a failing statement
                            exc = internal_error(exc, inner_stmt.span)
                        reserved = isinstance(exc, CopyRefused)
                        if reserved and not isinstance(inner_stmt, ast.For):
                            # the original tests a value before it binds it: one failing on the
                            # example binds nothing, and the caller's name stays what it was
                            failed = _fails_on_example(inner.scope, before, inner_stmt, repl)
                            exc, reserved = (exc, True) if failed is None else (failed, False)
                        # a loop keeps what it did before, and a name the caller reserves stays
                        # bound in the file's scope, as in the original
                        if not isinstance(inner_stmt, ast.For) and not reserved:
                            inner.scope.undo(before)  # a refused statement binds nothing
                            self.unrename(renames)  # nor renames an s-op
                        repl.failed(inner_stmt, exc.with_span(inner_stmt.span))
                        repl.errors.append(exc)
                        continue
                    for name in inner.scope.changed_since(before):
                        assigned_at[name] = k
                if isinstance(inner_stmt, ast.ReplCommand) and (
                    inner_stmt.command is ast.CommandKind.EXIT
                ):
                    break  # the original's REPL stops reading the file there (and goes on)
        except BaseException:
            # a load that does not end (Ctrl-C, too deep) binds nothing: nor do its statements
            # keep the names they gave shared s-ops (`tokens = tokens_int;` in the file)
            self.unrename(renamed_before)
            raise
        finally:
            self.loading.pop()
            if repl is not None:
                repl.left()
        # the names it imports, in the order of their last assignment (the REPL lists what the
        # file's statements bound as they ran: rasp.tools.repl_listing)
        copied = sorted(
            (
                (n, v)
                for n, v in inner.scope.values.items()
                if not n.startswith("_") and n != "out" and n not in frame.scope.reserved
            ),
            key=lambda item: assigned_at.get(item[0], -1),
        )
        for name, value in copied:
            try:
                frame.scope.assign(name, value, stmt.span)
            except CopyRefused:
                pass  # a nested load's name reserved further up: bound in this file (as there)
        if frame.top and inner.last is not None and inner.last in dict(copied):
            frame.last = inner.last
        return StatementResult(
            ResultKind.LOAD, tuple(n for n, _ in copied), tuple(v for _, v in copied), stmt.span
        )


def _fails_on_example(
    scope: Scope, mark: int, stmt: ast.Stmt, repl: ReplLoading
) -> RaspError | None:
    """The failure on the running example of a value `stmt` bound in `scope` since `mark`, if
    any (a statement whose copy to its caller was refused got no test of its value)."""
    for name in sorted(scope.changed_since(mark)):
        if name not in scope.values:
            continue
        bound = StatementResult(ResultKind.ASSIGN, (name,), (scope.values[name],), stmt.span)
        try:
            repl.check(bound)
        except RaspError as err:
            return err
    return None


def _loaded_statements(
    source: Source, repl: ReplLoading | None
) -> Sequence[ast.Stmt | RaspSyntaxError]:
    """A loaded file's statements; in the REPL, a syntax error costs only its statement (and
    takes its place, to be reported in the file's order)."""
    if repl is None:
        return parse(source).statements
    try:
        return parse(source).statements
    except RaspSyntaxError:
        return parse_recovering(source)
