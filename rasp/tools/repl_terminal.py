"""The REPL's terminal front end: prompt_toolkit when it is installed and stdin is a terminal.

Otherwise (no prompt_toolkit, or input piped in) it reads stdin line by line with the same prompts,
so a session can be scripted: `echo 'x = 1;' | rasp repl`. All RASP behaviour lives in
`rasp.tools.repl.ReplSession`; this module only moves lines in and text out, and gives the session
`draw(...)` (`draw_hook`: `rasp.tools.draw.repl_draw_hook`, imported when first used).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import traceback
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TextIO

from rasp.errors import Diagnostic
from rasp.tools.console import StdoutError, message_width, not_installed
from rasp.tools.interrupts import rearm_interrupts
from rasp.tools.repl import ReplSession
from rasp.tools.repl_help import COLON_COMMANDS, KEYWORDS
from rasp.tools.repl_wrap import wrap_report

HISTORY_FILE = Path("~/.rasp_history")

# What Ctrl-C prints, as the CLI says it (Python's REPL prints the exception's class name)
INTERRUPTED = "interrupted"
ReadLine = Callable[[str], str]  # prompt -> line; EOFError on Ctrl-D, KeyboardInterrupt on Ctrl-C


def run_terminal(
    path: str | None = None,
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    verbose: bool = False,
    quiet: bool = False,
) -> int:
    """Run an interactive session (loading `path` first, if given) until exit or end of input;
    `verbose` (`rasp repl -v`): an internal error's traceback goes to stderr; `quiet` (`-q`):
    results and errors only (`ReplSession.quiet`)."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    if isinstance(stdin, io.TextIOWrapper) and stdin.errors == "strict":
        # a byte that is not UTF-8 (Latin-1 text piped in) ended the session as an internal
        # UnicodeDecodeError; read so, the session reports it on its line (ReplSession.feed)
        stdin.reconfigure(errors="surrogateescape")
    session = ReplSession(draw_hook=draw_hook, quiet=quiet)
    interactive = stdin.isatty() and stdout.isatty()
    toolkit = _prompt_toolkit_reader(session) if interactive else None
    read_line = toolkit
    if read_line is None:
        # someone typing sees the prompts, also where the output goes on (`rasp repl | tee log`,
        # as the original's input() shows them); a piped script's output stays clean
        read_line = _plain_reader(stdin, stdout, echo_prompts=stdin.isatty())
    session.width = message_width(stdout)  # (64 columns: a 60-column terminal cut a word)
    _write(stdout, wrap_report(session.banner(), session.width))
    if path is not None:  # (a bug of ours in it is one line, as at the prompt: the session goes on)
        _guarded(session, lambda: session.load_path(path), stdout, verbose, "the file you loaded")
    # A typist's Ctrl-D, and Ctrl-C at input()'s prompt, leave the cursor after the prompt
    # (prompt_toolkit ends the line on Ctrl-C itself; input() is also a terminal's front end
    # when prompt_toolkit is not installed): what follows starts on a fresh line.
    typed = stdin.isatty()
    return run_loop(
        session,
        read_line,
        stdout,
        newline_on_eof=typed,
        newline_on_interrupt=typed and toolkit is None,
        verbose=verbose,
    )


def run_loop(
    session: ReplSession,
    read_line: ReadLine,
    stdout: TextIO,
    *,
    newline_on_eof: bool = False,
    newline_on_interrupt: bool = False,
    verbose: bool = False,
) -> int:
    """Feed lines to `session` until it finishes or input ends.

    Ctrl-C drops a partial statement, or stops a long evaluation; Ctrl-D (end of input) leaves.
    An internal error (a bug) is reported and the session goes on.
    """
    while not session.finished:
        prompt = session.continuation_prompt if session.is_continuing else session.prompt
        try:
            line = read_line(prompt)
        except EOFError:
            if newline_on_eof:  # so the shell's prompt starts on a fresh line
                stdout.write("\n")
            _guarded(session, session.end_of_input, stdout, verbose)
            break
        except KeyboardInterrupt:
            rearm_interrupts()  # (the session goes on: the next Ctrl-C interrupts again)
            session.interrupt()
            if newline_on_interrupt:
                stdout.write("\n")
            _write(stdout, INTERRUPTED)
            continue
        # A paste into prompt_toolkit comes back as one "line" holding newlines: fed line by
        # line, as typed (a `:command` or `exit` among them is a command, not RASP text).
        # (the rest of a paste runs after an error, as typed lines would: only Ctrl-C stops it)
        for part in line.split("\n"):
            if session.finished:
                break
            if not _guarded(session, lambda part=part: session.feed(part), stdout, verbose):
                break
    return 0


def _guarded(
    session: ReplSession,
    action: Callable[[], str],
    stdout: TextIO,
    verbose: bool,
    what: str = "the line you typed",
) -> bool:
    """Write what `action` prints; False when Ctrl-C stopped it. An OSError or a bug of ours is
    one message, and the session and its names go on (a bug ended them). Messages are wrapped to
    the terminal's width as it is now (resized since the last line, maybe): `message_width`."""
    session.width = message_width(stdout)
    try:
        printed = action()
    except KeyboardInterrupt:
        rearm_interrupts()
        session.interrupt()
        _write(stdout, session.take_unshown())  # (the line's statements before the stop)
        _write(stdout, INTERRUPTED)
        return False
    except OSError as exc:  # a file a command writes or reads: as the CLI says it
        session.interrupt()
        _write(stdout, session.take_unshown())
        where = f"{exc.filename}: " if exc.filename is not None else ""
        _write(stdout, session.error(f"{where}{exc.strerror or exc}"))
        return True
    except Exception as exc:  # a bug of ours: said as the CLI says it
        session.interrupt()
        _write(stdout, session.take_unshown())
        if verbose or os.environ.get("RASP_DEBUG") == "1":
            traceback.print_exc()
        _write(stdout, internal_error_text(exc, what, session.width))
        return True
    _write(stdout, printed)
    return True


def draw_hook(node: Any, tokens: list[Any]) -> str:
    """`draw(sop[, input]);`: compile for the input and write `comp_flows/NAME_INPUT.png`.

    The compiler, torch and matplotlib load only here; a missing one is a message, not a traceback
    (a selector or a program the compiler refuses raises a `RaspError`, which the session shows).
    """
    try:
        from rasp.tools.draw import repl_draw_hook

        return repl_draw_hook(node, tokens)
    except ModuleNotFoundError as exc:
        return f"\t{not_installed('draw', exc)}"
    except OSError as exc:  # (comp_flows/ in a directory it cannot write in)
        return f"\tdraw cannot write {exc.filename or 'its picture'}: {exc.strerror or exc}"


def internal_error_text(exc: BaseException, what: str, width: int | None = None) -> str:
    """The message a bug of ours is reported with, never a traceback (`rasp.tools.cli.main`'s),
    wrapped to `width` as every message of the session is."""
    message = (
        f"{type(exc).__name__}: {exc} (a bug in rasp-forge: please report it with {what}; "
        "RASP_DEBUG=1 shows the traceback)"
    )
    return Diagnostic(message, severity="internal error").render(width=width)


def _write(stdout: TextIO, text: str) -> None:
    """`text` on its own line; where stdout cannot take it (a full disk, not a reader that left),
    a `StdoutError`, which the CLI names (it said `[Errno 28] ...`)."""
    try:
        if text:
            stdout.write(text if text.endswith("\n") else text + "\n")
        stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise StdoutError(exc.errno, exc.strerror) from None


def _plain_reader(stdin: TextIO, stdout: TextIO, *, echo_prompts: bool) -> ReadLine:
    """`input()`-like reading; prompts are shown only to a terminal's typist, so piped output
    stays clean."""

    if echo_prompts and stdin is sys.stdin and stdout is sys.stdout:
        with contextlib.suppress(ImportError):
            import readline  # noqa: F401  - gives input() line editing and in-session history
        return input

    first = True

    def read(prompt: str) -> str:
        nonlocal first
        if echo_prompts:
            stdout.write(prompt)
            stdout.flush()
        line = stdin.readline()
        if not line:
            raise EOFError
        if first:  # a UTF-8 BOM before piped text is no character of it (as `rasp run` reads)
            line, first = line.removeprefix("\ufeff"), False
        return line.rstrip("\r\n")

    return read


def _prompt_toolkit_reader(
    session: ReplSession,
    *,
    history_file: Path = HISTORY_FILE,
    pt_input: Any = None,
    pt_output: Any = None,
) -> ReadLine | None:
    """A prompt_toolkit reader with persistent history and completion, or None if unavailable.

    `pt_input`/`pt_output` let tests drive it through a pipe instead of a terminal.
    """
    try:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.completion import Completer, Completion
        from prompt_toolkit.history import FileHistory, History, InMemoryHistory
    except ImportError:
        return None

    class _NameCompleter(Completer):
        def get_completions(self, document: Any, complete_event: Any) -> Iterable[Completion]:
            before = document.text_before_cursor.lstrip()
            if before.startswith(":") and " " not in before:  # a colon command being typed
                word = before
            else:
                word = document.get_word_before_cursor(WORD=False)
            if not word:
                return
            for candidate in completion_candidates(session, word):
                yield Completion(candidate, start_position=-len(word))

    class _StatementHistory(History):
        """Keeps a statement typed over several lines as one entry, so that the up arrow
        recalls a whole `def` (it recalled its last line, `}`, alone); the lines of a statement
        wait in `pending` until the session has read all of them."""

        def __init__(self, stored: History) -> None:
            super().__init__()
            self.stored = stored
            self.pending: list[str] = []

        def load_history_strings(self) -> Iterable[str]:
            return self.stored.load_history_strings()

        def store_string(self, string: str) -> None:
            self.stored.store_string(string)

        def append_string(self, string: str) -> None:
            self.pending.append(string)

        def end_statement(self) -> None:
            if self.pending:
                super().append_string("\n".join(self.pending))
                self.pending = []

    stored: History
    try:
        path = history_file.expanduser()
        # fails early (read-only home; a directory of that name, which prompt_toolkit reported
        # as an exception with "Press ENTER to continue..." at every prompt) so we can fall back
        with path.open("ab"), path.open("rb"):
            pass
        stored = FileHistory(str(path))
    except OSError:
        stored = InMemoryHistory()
    history = _StatementHistory(stored)
    prompt_session: PromptSession[str] = PromptSession(
        history=history, completer=_NameCompleter(), input=pt_input, output=pt_output
    )

    def read(prompt: str) -> str:
        # (a recalled statement comes back as one line holding newlines, fed as a paste is)
        if not session.is_continuing:  # the lines read so far were a whole statement
            history.end_statement()
        return prompt_session.prompt(prompt)

    return read


def completion_candidates(session: ReplSession, prefix: str) -> list[str]:
    """Keywords and names in scope that start with `prefix` (colon commands for `:...`), sorted."""
    pool = set(COLON_COMMANDS) if prefix.startswith(":") else set(KEYWORDS) | set(session.names())
    return sorted(c for c in pool if c.startswith(prefix) and c != prefix)
