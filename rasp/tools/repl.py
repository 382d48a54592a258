"""The REPL without a terminal: `ReplSession.feed(line)` returns exactly what the REPL prints.

It behaves like the original RASP REPL (tech-srl/RASP `REPL.py`): a running example (`hello`) is
evaluated under every new named s-op and selector, and a name whose value fails on the example is
reported and NOT bound (the original's definition-time check); `set example`, `show example`,
`examples on|off`, `full seq display on|off`, `load "f";`, `f(input);` and `exit`/`quit` work as
there. Ours adds several statements per line, located errors (`<repl>:line:col`, lines numbered per
statement), and the commands `:help`, `:names` and `:type NAME`, and the compiled view
(`:compile NAME`, then `:layers`, `:residual`, `:verify`, `:draw`: `rasp.tools.repl_compiled`).

`rasp.tools.repl_terminal` puts a terminal in front of this; the transcript tests drive it directly.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from rasp import __version__, ast
from rasp.continuation import Continuation
from rasp.deep_stack import run_deep
from rasp.display import ExampleSettings, applied_value, example_tokens, named_value
from rasp.errors import Diagnostic, RaspError
from rasp.interpreter import Interpreter
from rasp.lint import lint
from rasp.lint_scope import session_holds
from rasp.parser import parse
from rasp.results import Mark, ReplLoading, ResultKind, StatementResult
from rasp.sops import Selector, SOp, evaluate
from rasp.tools import repl_input
from rasp.tools.failure_warnings import error_then_warnings, name_loaded_cause
from rasp.tools.repl_commands import colon_command, repl_command
from rasp.tools.repl_compiled import CompiledView
from rasp.tools.repl_example_check import ExampleCheck
from rasp.tools.repl_help import help_text
from rasp.tools.repl_listing import LoadListing
from rasp.tools.repl_unbound import FailedNames
from rasp.tools.repl_values import function_text, plain_example, tokens_of
from rasp.tools.repl_wrap import wrap_report, wrap_values

# `draw_hook(node, tokens) -> text`: set by whoever can draw (the compiler side); None: no drawing.
DrawHook = Callable[[SOp | Selector, list[Any]], str]


class ReplSession:
    """One REPL session: an interpreter, the running examples, and the display switches."""

    prompt = ">> "

    def __init__(
        self,
        interpreter: Interpreter | None = None,
        *,
        search_dirs: Iterable[str | Path] = (),
        draw_hook: DrawHook | None = None,
        quiet: bool = False,
    ) -> None:
        self.interpreter = (
            interpreter
            if interpreter is not None
            else Interpreter(search_dirs=[Path(d) for d in search_dirs])
        )
        self.settings = ExampleSettings()
        self.draw_hook = draw_hook
        self.compiled = CompiledView()
        self.failed_names = FailedNames()  # a failed statement's names, for a later use to explain
        self.finished = False
        # the columns a message (an error, warning, hint or refusal) is wrapped to: the front
        # end's terminal's (`console.message_width`, asked before each line); None, one line
        # each, as in a pipe and the transcript goldens (tools read them, as the CLI's)
        self.width: int | None = None
        # `rasp repl -q`: results and errors only (no banner, warnings, notes or progress bars,
        # as `python -q` starts without its banner); a hint then says what a warning it names
        # warns of (not shown above or below)
        self.quiet = quiet
        self._pending: list[str] = []
        self._continuation = Continuation()  # reads _pending's lines, each once
        self._prompt_memo: tuple[list[str], int, int] = ([], 0, 0)  # see continuation_prompt
        self._history: list[str] = []  # the statements run so far (a compiled model's source)
        self.precedence_warnings: list[Diagnostic] = []  # rasp.lint's, of the statements typed
        self._unshown = ""  # see take_unshown
        self._example_check = ExampleCheck()  # its memo of values on the running examples
        self._drawn_in_loop: list[str] = []  # what a `for` body's draw(...) and load printed
        self._load_listing: LoadListing | None = None  # a running load's (_check_in_loop)
        self._listing: LoadListing | None = None  # the running statement's (_check_in_loop)
        self._switches: list[tuple[bool, bool]] = []  # the examples switches of running loads'
        self._listed_with: ExampleSettings | None = None  # as the last load ended (_left)

    # -- what the front end asks ----------------------------------------------------------------

    def banner(self) -> str:
        if self.quiet:
            return ""
        example = plain_example(self.settings.seq_example)
        return (
            f"rasp-forge {__version__} (RASP 0.1 compatible); :help lists the commands\n"
            f"running example is: {example}"
        )

    @property
    def continuation_prompt(self) -> str:
        """`.. `, indented two spaces for each `def` so far in the statement (outside comment
        lines), as the original's."""
        # (counted on from the lines counted before: a prompt at each line of a long statement
        # that counted all its lines again made reading it quadratic)
        pending, counted, depth = self._prompt_memo
        if pending is not self._pending:  # a new statement
            pending, counted, depth = self._pending, 0, 0
        for line in pending[counted:]:
            if not line.strip().startswith("#"):
                depth += line.split().count("def")
        self._prompt_memo = (pending, len(pending), depth)
        return ".. " + "  " * depth

    @property
    def is_continuing(self) -> bool:
        """True while a statement is unfinished (the front end shows `.. `)."""
        return bool(self._pending)

    def names(self) -> list[str]:
        return sorted(self.interpreter.names())

    @property
    def source_text(self) -> str:
        """Every statement text run in this session, in order."""
        return "\n".join(self._history)

    def interrupt(self) -> None:
        """Ctrl-C: drop the partial statement."""
        self._pending = []

    def end_of_input(self) -> str:
        """Ctrl-D or the end of piped input: an unfinished statement is reported (its syntax
        error, "unexpected end of input"), not dropped in silence."""
        unfinished = "\n".join(self._pending)
        self._pending = []
        return self.run_text(unfinished) if unfinished else ""

    # -- input ----------------------------------------------------------------------------------

    def feed(self, line: str) -> str:
        """Take one input line; return what the REPL prints for it ("" mid-statement)."""
        if self.finished:
            return ""
        not_text = repl_input.not_utf8(line, width=self.width)
        if not_text is not None:
            self._pending = []  # (the statement it was part of goes with it, as on Ctrl-C)
            return not_text
        if line.strip().startswith(":") and (
            not self._pending or repl_input.breaks(self._pending, line)
        ):
            # (after an unfinished statement, `y` without its ';', a command is not swallowed
            # into it: the statement's error, then the command)
            unfinished = "\n".join(self._pending)
            self._pending = []
            done = [self.run_text(unfinished)] if unfinished else []
            return "\n".join(p for p in (*done, colon_command(self, line.strip())) if p)
        if self._pending and repl_input.is_command(line) and repl_input.breaks(self._pending, line):
            # (`exit` or `set example ...` after an unfinished statement: its error, then the
            # command, as for a `:command`)
            unfinished = "\n".join(self._pending)
            self._pending = []
            return "\n".join(p for p in (self.run_text(unfinished), self.feed(line)) if p)
        if not self._pending and repl_input.is_blank(line):
            return ""
        if not self._pending and (
            line.strip() == "?"  # (no statement: a program cannot name it)
            or line.strip() in ("help", "help;")
            and "help" not in self.interpreter.names()
        ):
            return help_text(
                self.width
            )  # what a newcomer types first (a program may still name `help`)
        if not self._pending:
            self._continuation = Continuation()
        self._pending.append(line)
        text = "\n".join(self._pending)
        if repl_input.is_blank(text):
            self._pending = []
            return ""
        if (
            repl_input.open_block(text)
            or repl_input.open_bracket(text)
            or not self._continuation.is_complete(self._pending)
        ):
            # (a def's or for's syntax error waits for its closing '}': the rest of its body is
            # part of it, not new statements that would run, or fail, at the top level. So does
            # one inside an open bracket, reported once it closes: the cheap bracket counts go
            # first, and `Continuation` reads each line once, so that a long statement is not
            # parsed again at each line, which made pasting one quadratic)
            return ""
        self._pending = []
        return self.run_text(text)

    def run_text(self, text: str, filename: str = "<repl>") -> str:
        """Run complete text (one or more statements); stop at the first error."""
        out: list[str] = []
        self._unshown = ""
        self._history.append(text)
        try:
            program = parse(text, filename)
        except RaspError as err:
            self.failed_names.parse_failed(text, err, self.interpreter.value)
            return err.render(width=self.width)
        for k, stmt in enumerate(program.statements):
            # its precedence warnings, once as it is entered (not at each evaluation), and those
            # of the files it loads; read as in a file, with what the session's names hold so
            # far (`t = tokens;` before). A failing statement's follow its error (failure_warnings)
            linted = lint((stmt,), session_holds((stmt,), self.interpreter.value))
            try:
                lines = self._statement(stmt)
                out += self._rendered(linted)
                out += self._loaded_warnings() + lines
            except RaspError as err:
                self.failed_names.line_failed(program.statements, k, err, self.interpreter.value)
                out += self._loaded_warnings()
                shown = self._drawn_in_loop  # (a loop that failed after drawing)
                if self._listing is not None:  # (or after a load in a call had listed its names)
                    shown = shown + self._listing.lines
                out += wrap_values(shown, self.width)
                # its error first, and a warning inside what failed named as the likely cause
                out += error_then_warnings(
                    err, () if self.quiet else linted, width=self.width, hidden=linted
                )
                if isinstance(stmt, ast.For):  # (a loop keeps what its body bound before)
                    self.precedence_warnings += linted
                break
            except BaseException:
                out += self._rendered(linted)  # (shown as it ran)
                # Ctrl-C or a bug of ours, which the front end reports: after what the line's
                # earlier statements printed (they stay bound; only "interrupted" showed)
                self._unshown = "\n".join(out)
                raise
            self.precedence_warnings += linted  # (a :compile's constant output names them)
            self.failed_names.forget_bound(self.interpreter.value)
            if self.finished:
                break
        return "\n".join(out)

    def _loaded_warnings(self) -> list[str]:
        taken = self.interpreter.take_warnings()
        self.precedence_warnings += taken
        return self._rendered(taken)

    def _rendered(self, diagnostics: Iterable[Diagnostic]) -> list[str]:
        """Warnings and notes as shown (none under `quiet`)."""
        return [] if self.quiet else [d.render(width=self.width) for d in diagnostics]

    def error(self, message: str) -> str:
        """`error: MESSAGE`, wrapped as every message of the session is (`width`)."""
        return Diagnostic(message).render(width=self.width)

    def _loaded_lint(self) -> tuple[Sequence[Diagnostic], Sequence[Diagnostic]]:
        """(the loaded files' warnings printed above a listing, all of them): none printed
        under `quiet`."""
        shown, linted = self.interpreter.loaded_lint()
        return (() if self.quiet else shown), linted

    def take_unshown(self) -> str:
        """What a line stopped by Ctrl-C or a bug had printed before (`run_text`), once."""
        unshown, self._unshown = self._unshown, ""
        return unshown

    def load_path(self, path: str | Path) -> str:
        """`rasp repl FILE`: `load` the file into this session; its names are listed."""
        file = Path(path)
        if file.is_dir():  # as the CLI says it (`rasp run DIR`)
            return self.error(f"cannot read {path}: it is a directory")
        if not file.is_file():
            return self.error(f"cannot read {path}: No such file")
        if '"' in str(file.resolve()):
            return self.error(f"cannot load {path}: the path contains a double quote")
        # the load names the file as typed where it finds that very file (it looks for NAME.rasp
        # first, in the working directory first), so its errors show the path typed
        typed = str(path)
        plain = '"' not in typed and "\\" not in typed  # (a string's escapes aside)
        as_typed = plain and file.suffix and not Path(typed + ".rasp").exists()
        return self.run_text(f'load "{typed if as_typed else file.resolve()}";')

    # -- statements -----------------------------------------------------------------------------

    def _statement(self, stmt: ast.Stmt) -> list[str]:
        self._drawn_in_loop = []
        self._load_listing = None
        with self.interpreter.recording() as saved:  # (costs what the statement changes)
            return self._recorded_statement(stmt, saved)

    def _recorded_statement(self, stmt: ast.Stmt, saved: Mark) -> list[str]:
        errors: list[RaspError] = []  # a loaded file's failing statements, reported and skipped
        quiet = dataclasses.replace(self.settings, show_seq=False, show_sel=False)
        self._listed_with = None
        listing = LoadListing(
            errors,
            lambda name, value: named_value(
                name, value, self._sized(self._listed_with or quiet), function_text=function_text
            ),
            lambda err: name_loaded_cause(err, *self._loaded_lint()),
            width=self.width,
        )
        loading = ReplLoading(
            watch=lambda loaded: self._loaded(loaded, listing),
            errors=errors,
            check=self._check_on_example,
            entered=self._entered,
            left=self._left,
            failed=self.failed_names.load_failed,
            unparsed=self.failed_names.load_unparsed,
        )
        if isinstance(stmt, ast.Load):
            self._load_listing = listing
        self._listing = listing
        try:
            result = self.interpreter.exec_statement(
                stmt, repl_loading=loading, check=self._check_in_loop
            )
        except RaspError:
            raise  # (a `for` that failed keeps what its body bound before, as in the original)
        except Exception:
            # a bug of ours: the session goes on, without its half-done work
            self.interpreter.undo(saved)
            raise
        try:
            listing.dump()
            # in the order they were printed: a loop moves what was listed before it runs to
            # _drawn_in_loop (a loop in a file that a def's body loads too: its nested load's
            # names came after the file's later ones)
            # (what a load printed, its `show example` and names, fits the terminal too)
            shown = wrap_values(self._drawn_in_loop + listing.lines, self.width)
            return shown + self._show_result(stmt, result)
        except (Exception, KeyboardInterrupt):
            # The definition-time check failed, Ctrl-C stopped it (a slow s-op) or a bug of ours
            # did: as in the original, the names keep their old values (an unchecked value is not
            # bound). Assignment also renames the assigned s-op (`tokens = tokens_int;` names
            # tokens_int "tokens"): that is undone too.
            self.interpreter.undo(saved)
            raise

    def _show_result(self, stmt: ast.Stmt, result: StatementResult) -> list[str]:
        match result.kind:
            case ResultKind.FOR:
                return []
            case ResultKind.COMMAND:  # (`show example`'s lines fit the terminal too)
                return wrap_values(
                    repl_command(self, result.values[0], result.values[1:]), self.width
                )
            case ResultKind.LOAD:
                return []  # the file's names were listed as it ran (`LoadListing`)
            case ResultKind.DRAW:
                return self._draw(result)
            case ResultKind.EXPR if (
                not result.names
            ):  # an application `f(input);`, already evaluated
                (value,) = result.values
                tokens = self._call_input(stmt)
                if len(tokens) != len(value):  # the input is not visible here (e.g. inside a def)
                    tokens = list(range(len(value)))
                shown = run_deep(
                    lambda: applied_value(value, tokens, self.settings.full_seq, self.width)
                )
                return wrap_values(shown, self.width)
        # (on the deep stack, as the statement ran: showing a list 5,000 deep recurses as deep)
        return wrap_values(run_deep(lambda: self._checked_and_named(result)), self.width)

    def _sized(self, settings: ExampleSettings) -> ExampleSettings:
        """`settings` with the terminal's width, that a wider table is shown in chunks of."""
        return dataclasses.replace(settings, width=self.width)

    def _checked_and_named(self, result: StatementResult) -> list[str]:
        self._check_on_example(result)
        return self._named(result, self._sized(self.settings))

    def _entered(self) -> None:
        """A load starts: as the original's `loadFile`, it turns the examples off for the file's
        run; the file's own `examples on` turns them on for the rest of it and its listing."""
        self._switches.append((self.settings.show_seq, self.settings.show_sel))
        self.settings = dataclasses.replace(self.settings, show_seq=False, show_sel=False)

    def _left(self) -> None:
        """A load ends: its names are listed with the settings in force now (`_listed_with`),
        and the examples switches are set back as they were before it (a loaded file's `examples
        off` does not outlast its load)."""
        self._listed_with = self.settings
        show_seq, show_sel = self._switches.pop()
        self.settings = dataclasses.replace(self.settings, show_seq=show_seq, show_sel=show_sel)

    def _loaded(self, result: StatementResult, listing: LoadListing) -> None:
        """A loaded file's statement, run as the original's REPL runs it: a REPL command acts on
        this session (`set example`, `full seq display on`, ...; `exit` stops reading the file,
        not the session), and a new s-op or selector must evaluate on the running example (else
        it is refused), and `draw(...)` draws. What it prints goes to `listing`, printed when its
        file ends."""
        match result.kind:
            case ResultKind.COMMAND if result.values[0].command is ast.CommandKind.SHOW_EXAMPLE:
                command, rest = result.values[0], result.values[1:]
                listing.printed(lambda: repl_command(self, command, rest))  # (shown as listed)
            case ResultKind.COMMAND if result.values[0].command is not ast.CommandKind.EXIT:
                listing.printed(repl_command(self, result.values[0], result.values[1:]))
            case ResultKind.ASSIGN | ResultKind.EXPR | ResultKind.DEF:
                self._check_on_example(result)
                listing.named(result)
            case ResultKind.LOAD:
                listing.dump()  # a nested load prints what has gathered when it ends
            case ResultKind.DRAW:  # drawn as if typed; the original lists no value for it
                listing.printed(self._draw(result, with_value=False))

    def _check_in_loop(self, result: StatementResult) -> None:
        """A statement of a `for` body: tested on the running example as it runs, as the original
        tests every value it computes (a failure stops the loop; what ran before stays bound)."""
        if result.kind in (ResultKind.ASSIGN, ResultKind.EXPR):
            self._check_on_example(result)
        elif result.kind is ResultKind.DRAW:  # drawn as the loop runs, as the original draws
            drawn = self._draw(result, with_value=False)
            if self._load_listing is not None:  # a loaded file's loop: in the file's order
                self._load_listing.printed(drawn)
            else:
                self._drawn_in_loop += drawn
        elif result.kind is ResultKind.LOAD and self._listing is not None:
            # listed as each load ends, as the original's loadFile lists its file's names: once
            # per iteration, in order with the loop's draws and before an error that stops it
            self._listing.dump()
        if self._load_listing is None and self._listing is not None:
            # a typed loop (else the loaded file's own order): what its loads listed so far,
            # those of a def's body it called too, comes before its later draws
            self._drawn_in_loop += self._listing.lines
            self._listing.lines = []

    def _named(self, result: StatementResult, settings: ExampleSettings) -> list[str]:
        lines: list[str] = []
        for name, value in zip(result.names, result.values, strict=False):
            lines += named_value(name, value, settings, function_text=function_text)
        return lines

    def _check_on_example(self, result: StatementResult) -> None:
        """The definition-time check (`ExampleCheck`): a value failing on the running example
        raises, located at the statement."""
        self._example_check.check(result, self.settings)

    def _call_input(self, stmt: ast.Stmt) -> list[Any]:
        """The tokens `f(input);` was applied to (for the selector grid and the full seq rows)."""
        if isinstance(stmt, ast.ExprStmt) and isinstance(stmt.expr, ast.Call) and stmt.expr.args:
            arg = stmt.expr.args[0]
            with self.interpreter.recording() as saved:
                try:
                    given = self.interpreter.exec_statement(ast.ExprStmt(arg, arg.span)).values[0]
                finally:  # evaluating the argument again must not rebind `out`
                    self.interpreter.undo(saved)
            if isinstance(given, str | list | dict):
                return example_tokens(given)
        return example_tokens(self.settings.seq_example)

    def _draw(self, result: StatementResult, *, with_value: bool = True) -> list[str]:
        node = result.values[0]
        example = result.values[1] if len(result.values) > 1 else self.settings.seq_example
        tokens = tokens_of(example, result.span)
        value = evaluate(node, tokens)
        if self.draw_hook is None:
            lines = ["\tdraw needs the compiler's drawing support, which is not available here"]
        else:
            lines = [self.draw_hook(node, tokens)]
        if with_value:
            lines += applied_value(value, tokens, self.settings.full_seq, self.width)
        # (its tab-indented lines too: a message, a picture's path, the value drawn)
        return [wrap_report(line, self.width) for line in lines]
