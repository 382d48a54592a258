"""Running RASP statements: scopes, functions, loops, `load`, and the lazy s-op graph they build.

Running a program computes no sequence: every s-op or selector expression creates a `rasp.sops` node
(see `operators.py`); `rasp.sops.evaluate` computes one on an input. `f(input)` with an s-op or
selector `f` is the one expression that evaluates. Built-ins live in the root scope, the prelude
(`prelude.rasp`) in a child scope whose names are reserved, and the program's names below it.
What an expression means is `rasp.expressions`; calls come back here (`_call`), since a `def`'s
body is statements. A `load` statement runs its file through `rasp.loads`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from rasp import ast, builtins
from rasp.call_hints import arity_hint
from rasp.call_names import call_text
from rasp.deep_stack import fallback_note, run_deep
from rasp.errors import (
    Diagnostic,
    RaspError,
    RaspNameError,
    RaspRuntimeError,
    RaspTypeError,
    Source,
    Span,
)
from rasp.expressions import Expressions, iteration_hint
from rasp.loads import Frame, Loads, internal_error
from rasp.nodes import fresh_id, mark_call
from rasp.parser import parse
from rasp.results import Bindings, Mark, ReplLoading, ResultKind, StatementResult
from rasp.sops import (
    IndicesSOp,
    LengthSOp,
    Node,
    Selector,
    SeqValue,
    SOp,
    TokenKind,
    TokensSOp,
    evaluate,
)
from rasp.sources import Progress, read_source
from rasp.values import (
    BASE_RESERVED,
    BuiltinFunction,
    RaspFunction,
    Scope,
    describe,
    kind_name,
)
from rasp.wording import with_article

# Nested calls of a `def` (an endless recursion's error). The original stops at 100 to 140, where
# Python's recursion limit does; statements run with a higher limit (rasp.deep_stack).
MAX_CALL_DEPTH = 1000


@functools.lru_cache(maxsize=1)
def _prelude_program() -> ast.Program:
    text = resources.files("rasp").joinpath("prelude.rasp").read_text(encoding="utf-8")
    return parse(text, "rasp/prelude.rasp")


class Interpreter:
    """One RASP environment: built-ins, the prelude, then the program's own names."""

    def __init__(self, *, search_dirs: Sequence[Path] = ()) -> None:
        self.search_dirs = tuple(Path(d) for d in search_dirs)
        self._depth = 0
        self._repl_loading: ReplLoading | None = None  # see exec_statement
        self._check: Callable[[StatementResult], None] | None = None  # see exec_statement
        # this statement's renames (or a recording's), undone if refused: (node, name, named_in)
        self._renamed: list[tuple[Node, str | None, str | None]] = []
        self._recordings = 0  # open `recording`s
        self._loads = Loads(
            self._exec,
            # a file's own names may reuse the library's, as the original's file scope; they
            # are refused as they are copied into a caller that reserves them
            lambda label: Scope(self._prelude, BASE_RESERVED, label),
            lambda: len(self._renamed),
            self._unrename,
        )
        root = Scope(None, BASE_RESERVED, "built-ins")
        for kind in TokenKind:
            root.force(f"tokens_{kind.value}", TokensSOp(kind=kind, name=f"tokens_{kind.value}"))
        self.indices = IndicesSOp(name="indices")
        self.length = LengthSOp(name="length")
        self._expressions = Expressions(self._call, self._full_s, self.indices, self.length)
        root.force("indices", self.indices)
        root.force("length", self.length)
        root.force("True", True)
        root.force("False", False)
        root.force(
            "selector_width", BuiltinFunction("selector_width", ("sel",), builtins.selector_width)
        )
        library_reserved = BASE_RESERVED | frozenset(root.values)
        self._prelude = Scope(root, library_reserved, "prelude")
        prelude_frame = Frame(self._prelude, top=False)
        for stmt in _prelude_program().statements:
            self._exec(stmt, prelude_frame)
        # `tokens` is an ordinary variable (the original's library sets it); the rest is reserved.
        # The original's REPL runs `tokens = tokens_str;` last as it starts, which binds `out`.
        self._prelude.force("tokens", root.values["tokens_str"])
        self._prelude.force("out", root.values["tokens_str"])
        root.values["tokens_str"].name = "tokens"
        self._reserved = library_reserved | (frozenset(self._prelude.values) - {"tokens"})
        self._globals = Scope(self._prelude, self._reserved, "console")
        self._frame = Frame(self._globals, top=True)

    # ---- public API ----------------------------------------------------------------------------

    @property
    def last_assigned(self) -> str | None:
        """The last name the program assigned at its top level (the CLI's default output name)."""
        return self._frame.last

    def get(self, name: str) -> Any:
        return self._globals.lookup(name, None)

    def value(self, name: str) -> Any:
        """`name`'s value, None where it has none: no error (whose did-you-mean reads every name)."""
        scope: Scope | None = self._globals
        while scope is not None and name not in scope.values:
            scope = scope.parent
        return None if scope is None else scope.values[name]

    def assigned_at(self, name: str) -> Span | None:
        """Where the program's top level last assigned `name` (None for built-ins and the prelude)."""
        return self._globals.spans.get(name)

    def names(self) -> list[str]:
        """Every name a user can refer to (for completion)."""
        return sorted(self._globals.visible())

    def user_names(self) -> list[str]:
        """The names the program itself bound at its top level (not the built-ins or prelude)."""
        return sorted(n for n in self._globals.values if n != "out")

    def snapshot(self) -> Bindings:
        """The program's top-level bindings, to undo statements with `restore` (the REPL's
        definition-time check). Node names set by assignments are not undone."""
        return Bindings(dict(self._globals.values), self._frame.last, dict(self._globals.spans))

    def restore(self, saved: Bindings) -> None:
        self._globals.values.clear()
        self._globals.values.update(saved.values)
        self._globals.spans = dict(saved.spans)
        self._frame.last = saved.last_assigned

    @contextmanager
    def recording(self) -> Iterator[Mark]:
        """Remember what the statements run inside change (top-level bindings, and the names that
        assignments give s-ops), so that `undo(mark)` puts it back: the REPL's definition-time
        check. Unlike `snapshot`, this costs what the statements change, not the number of names."""
        self._recordings += 1
        try:
            with self._globals.recording() as bindings:
                yield Mark(bindings, self._frame.last, len(self._renamed))
        finally:
            self._recordings -= 1
            if not self._recordings:
                self._renamed.clear()

    def undo(self, mark: Mark) -> None:
        """Put back the bindings and s-op names as they were at `mark` (inside its recording)."""
        self._globals.undo(mark.bindings)
        self._frame.last = mark.last_assigned
        self._unrename(mark.renames)

    def take_warnings(self) -> tuple[Diagnostic, ...]:
        """The lint warnings (`rasp.lint`) of the files loaded since the last call, each file's
        once: the program's own are the front end's to find, as it parsed the program."""
        taken = tuple(self._loads.warnings)
        self._loads.warnings.clear()
        return taken

    def loaded_lint(self) -> tuple[tuple[Diagnostic, ...], tuple[Diagnostic, ...]]:
        """(the warnings `take_warnings` would give now, every loaded file's warnings so far)."""
        return tuple(self._loads.warnings), tuple(self._loads.linted)

    def exec_program(
        self, program: ast.Program, progress: Progress | None = None
    ) -> list[StatementResult]:
        """Run every statement; `progress("running", statements run, total)` after each one."""
        if progress is None:
            return [self.exec_statement(stmt) for stmt in program.statements]
        results = []
        total = len(program.statements)
        for stmt in program.statements:
            results.append(self.exec_statement(stmt))
            progress("running", len(results), total)
        return results

    def exec_statement(
        self,
        stmt: ast.Stmt,
        *,
        repl_loading: ReplLoading | None = None,
        check: Callable[[StatementResult], None] | None = None,
    ) -> StatementResult:
        """Run one top-level statement; every failure is a located `RaspError`.

        With `repl_loading`, a `load`ed file runs as in the original's REPL (`ReplLoading`): its
        failing statements are reported there and skipped, and its REPL commands are passed on.
        Without it, the first failure ends the statement, and a loaded file's REPL commands are
        ignored, as a program run from a file ignores its own.

        `check` sees the result of each statement that a `for` body runs at a file's top level (the
        REPL tests its new s-ops on the running example, as the original's REPL tests every value
        as it goes) and refuses it by raising a RaspError: that statement binds nothing, and the
        loop stops there, keeping what its earlier statements bound."""
        return run_deep(lambda: self._exec_top(stmt, repl_loading, check))

    def _exec_top(
        self,
        stmt: ast.Stmt,
        repl_loading: ReplLoading | None,
        check: Callable[[StatementResult], None] | None,
    ) -> StatementResult:
        self._repl_loading = repl_loading
        self._check = check
        try:
            return self._exec(stmt, self._frame)
        except RaspError as exc:
            raise exc.with_span(stmt.span) from None
        except RecursionError:
            note = fallback_note()  # (a system without a big stack: say why it came so soon)
            hint = "split it into smaller steps" + (f"\nhint: {note}" if note else "")
            raise RaspRuntimeError("the program nests too deeply", stmt.span, hint=hint) from None
        except (
            Exception
        ) as exc:  # a bug of ours: still report it at the statement, not as a traceback
            raise internal_error(exc, stmt.span) from None
        finally:
            self._depth = 0
            self._loads.loading.clear()
            self._repl_loading = None
            self._check = None
            if not self._recordings:  # (else kept for `undo`)
                self._renamed.clear()

    # ---- statements ----------------------------------------------------------------------------

    def _exec(self, stmt: ast.Stmt, frame: Frame) -> StatementResult:
        scope = frame.scope
        match stmt:
            case ast.ExprStmt(expr=expr):
                return self._expr_statement(expr, frame, stmt.span)
            case ast.Assign(targets=targets, values=exprs):
                values = [self._expressions.eval(e, scope) for e in exprs]
                bound = builtins.unpack(targets, values, stmt.span)
                if self._check is not None and not all(map(scope.assignable, targets)):
                    # the original binds the names before a reserved one and fails there, having
                    # tested every value as it computed it: a failing value binds nothing
                    self._check(
                        StatementResult(ResultKind.ASSIGN, targets, tuple(bound), stmt.span)
                    )
                for name, value, span in zip(targets, bound, stmt.target_spans):
                    scope.assign(name, value, span)  # (a reserved name raises, after the others)
                    if isinstance(value, Node) and _renamable(value, name):
                        self._renamed.append((value, value.name, value.named_in))
                        value.name = name  # the original renames an s-op when it is assigned
                        value.named_in = frame.function  # (messages name a def's local by it)
                    if frame.top:
                        frame.last = name
                scope.force("out", values[-1])
                return StatementResult(ResultKind.ASSIGN, targets, tuple(bound), stmt.span)
            case ast.FuncDef(name=name, params=params, body=body, returns=returns):
                for param in params:
                    if param in BASE_RESERVED:
                        raise RaspNameError(f"Cannot set reserved name: {param}", stmt.span)
                if len(set(params)) != len(params):
                    raise RaspNameError(f"a parameter of {name} is named twice", stmt.span)
                fn = RaspFunction(name, params, body, returns, scope, scope.label)
                scope.assign(name, fn, stmt.span)
                return StatementResult(ResultKind.DEF, (name,), (fn,), stmt.span)
            case ast.For(targets=targets, iterable=iterable_expr, body=body):
                iterable = self._expressions.eval(iterable_expr, scope)
                if not isinstance(iterable, list | dict):
                    raise RaspTypeError(
                        "for loop needs to iterate over a list or dict, but got: "
                        + describe(iterable),
                        iterable_expr.span,
                        iteration_hint(iterable),
                    )
                checked = self._check is not None and frame.top
                if checked and self._check is not None:
                    # the original tests the iterable's s-ops as it computes them: one failing on
                    # the running example fails the loop before it binds anything
                    self._check(
                        StatementResult(ResultKind.EXPR, (), (iterable,), iterable_expr.span)
                    )
                for item in list(iterable):
                    builtins.bind_targets(scope, targets, item, stmt.span)
                    for inner in body:
                        if checked:
                            self._exec_checked(inner, frame)
                        else:
                            self._exec(inner, frame)
                return StatementResult(ResultKind.FOR, (), (), stmt.span)
            case ast.Load():
                loaded = self._loads.load(stmt, frame, self.search_dirs, self._repl_loading)
                if self._repl_loading is not None and not frame.top:
                    # the original lists a file's names as its load ends, in a def's body too
                    self._repl_loading.watch(loaded)
                return loaded
            case ast.Draw(expr=expr, input=input_expr):
                node = self._expressions.eval(expr, scope)
                if not isinstance(node, SOp):
                    raise RaspTypeError(f"draw expects an s-op, got: {describe(node)}", expr.span)
                values: tuple[Any, ...] = (node,)
                if input_expr is not None:
                    values = (node, self._expressions.eval(input_expr, scope))
                names = (node.name,) if node.name else ()
                return StatementResult(ResultKind.DRAW, names, values, stmt.span)
            case ast.ReplCommand():
                if stmt.example is not None:
                    try:
                        example = self._expressions.eval(stmt.example, scope)
                    except RaspNameError as err:
                        if err.hint is None and isinstance(stmt.example, ast.Name):
                            # `set example hello`: a string needs its quotes
                            err.hint = f'a string is written in quotes: "{stmt.example.name}"'
                        raise
                    return StatementResult(ResultKind.COMMAND, (), (stmt, example), stmt.span)
                return StatementResult(ResultKind.COMMAND, (), (stmt,), stmt.span)
        raise TypeError(f"unknown statement {stmt!r}")

    def _exec_checked(self, stmt: ast.Stmt, frame: Frame) -> None:
        """`stmt` in a `for` body, then `self._check` on its result. A refusal, Ctrl-C during the
        check (a slow s-op), or a bug of ours in the statement or the check undoes its bindings
        (and renames) and raises: the loop keeps what ran before it, as for an evaluation error
        (a bug is an internal error located at `stmt`, not at the loop)."""
        scope, check = frame.scope, self._check
        with scope.recording() as mark:  # (not a copy of every name: see Scope.recording)
            before = (mark, frame.last, len(self._renamed))
            try:
                result = self._exec(stmt, frame)
            except (RaspError, RecursionError):
                raise  # (it bound nothing, or the names before a reserved one, as there; a
                # nested `for` keeps what it did before)
            except Exception as exc:
                if not isinstance(stmt, ast.For):
                    self._undo(frame, before)
                raise internal_error(exc, stmt.span) from None
            if check is None:
                return
            try:
                check(result)
            except (Exception, KeyboardInterrupt) as exc:  # (an unchecked value is not bound)
                self._undo(frame, before)
                if isinstance(exc, RaspError | RecursionError | KeyboardInterrupt):
                    raise
                raise internal_error(exc, stmt.span) from None

    def _undo(self, frame: Frame, before: tuple[int, str | None, int]) -> None:
        mark, frame.last, renames = before
        frame.scope.undo(mark)
        self._unrename(renames)

    def _unrename(self, renames: int) -> None:
        while len(self._renamed) > renames:
            node, node.name, node.named_in = self._renamed.pop()

    def _expr_statement(self, expr: ast.Expr, frame: Frame, span: Span) -> StatementResult:
        value = self._expressions.eval(expr, frame.scope)
        if isinstance(expr, ast.Call) and isinstance(value, SeqValue | np.ndarray):
            return StatementResult(ResultKind.EXPR, (), (value,), span)
        frame.scope.force("out", value)
        if frame.top and isinstance(value, SOp):
            frame.last = "out"  # a program that ends with `e;` outputs e, as the original binds out
        names = (expr.name,) if isinstance(expr, ast.Name) else ("out",)
        return StatementResult(ResultKind.EXPR, names, (value,), span)

    # ---- what expressions ask of the interpreter (rasp.expressions) ----------------------------

    def _full_s(self) -> Selector:
        full_s = self._prelude.values.get("full_s")
        if not isinstance(full_s, Selector):
            raise RaspRuntimeError("the prelude's full_s is missing")
        return full_s

    def _call(self, func: Any, args: list[Any], call: ast.Call) -> Any:
        """A call: a `def` runs its body here; a built-in, s-op or selector is applied."""
        span = call.span
        if isinstance(func, RaspFunction):
            library = func.scope is self._prelude  # (`max(tokens_int)`: what gives the maximum)
            hint = arity_hint(func.signature(), func.name, call.args, library)
            builtins.check_arity(func.name, len(func.params), len(args), span, hint)
            if self._depth >= MAX_CALL_DEPTH:
                raise RaspRuntimeError(
                    f"calls nest deeper than {MAX_CALL_DEPTH} (endless recursion in {func.name}?)",
                    span,
                )
            # labelled as the original labels a call's scope: the defining one's, with a '
            scope = Scope(func.scope, BASE_RESERVED, f"{func.scope.label}'")
            for param, arg in zip(func.params, args):
                scope.assign(param, arg, span)
            frame = Frame(scope, top=False, function=func.name)
            self._depth += 1
            before = fresh_id()  # the nodes the body makes come after it
            try:
                for stmt in func.body:
                    self._exec(stmt, frame)
                results = [self._expressions.eval(e, scope) for e in func.returns]
            except RaspError as err:
                raise err.called_from(func.name, span) from None
            finally:
                self._depth -= 1
            mark_call(results, before, func.name, span)
            for result in results:  # the original names a returned s-op after its call
                if isinstance(result, Node) and not result.name and result.called_as is None:
                    result.called_as = call_text(func.name, args)
            return results[0] if len(results) == 1 else results
        if isinstance(func, BuiltinFunction):
            builtins.check_arity(
                func.name, len(func.params), len(args), span, f"call it as {func.signature()}"
            )
            return func.impl(tuple(args), span)
        if isinstance(func, SOp | Selector):
            return builtins.apply(func, args, span)
        raise RaspTypeError(
            f"cannot call {kind_name(func)} {describe(func)}",
            call.func.span,
            hint="only functions (def), s-ops and selectors can be called",
        )


def _renamable(node: Node, name: str) -> bool:
    """Assignment names a node, except the inputs: `indices`, `length` and `tokens_*` keep their
    names (they label the compiled model's inputs), apart from `tokens` naming the token node."""
    if isinstance(node, IndicesSOp | LengthSOp):
        return False
    return not isinstance(node, TokensSOp) or name == "tokens"


# ---- one-call helpers for the CLI ---------------------------------------------------------------


def load_file(
    path: Path, *, search_dirs: Sequence[Path] = (), progress: Progress | None = None
) -> Interpreter:
    """Run the program in `path` in a fresh interpreter and return it."""
    return load_source(read_source(path), search_dirs=search_dirs, progress=progress)


def load_source(
    source: Source, *, search_dirs: Sequence[Path] = (), progress: Progress | None = None
) -> Interpreter:
    """Run the program `source` (a file's or standard input's text) in a fresh interpreter.

    Parsing and running take time linear in the program's size; `progress(stage, done, total)`
    is told how far each has got.
    """
    interpreter = Interpreter(search_dirs=search_dirs)
    interpreter.exec_program(parse(source, progress=progress), progress)
    return interpreter


def run_file(path: Path, tokens: Sequence[Any] | str, name: str | None = None) -> SeqValue:
    """The value of s-op `name` (default: the program's last assigned name) on `tokens`."""
    interpreter = load_file(path)
    chosen = name or interpreter.last_assigned
    if chosen is None:
        raise RaspNameError(
            f"{path} assigns no name to run", hint="pass the s-op's name explicitly"
        )
    value = interpreter.get(chosen)
    if not isinstance(value, SOp):
        raise RaspTypeError(
            f"'{chosen}' is {with_article(kind_name(value))}, not an s-op: {describe(value)}"
        )
    result = evaluate(value, list(tokens))
    if not isinstance(result, SeqValue):
        raise TypeError("an s-op evaluated to a selector matrix")  # a bug in rasp.sops
    return result
