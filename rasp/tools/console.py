"""How a CLI command talks to the person running it, under `--quiet`, `--verbose` and `--json`.

- results (what the command is for: `run`'s value, `show`'s summary, any `--json` object) go to
  stdout, always;
- notes (what was done: `wrote reverse.safetensors: ...`) go to stdout, except with `--quiet` or
  `--json` (the JSON object says it instead);
- warnings go to stderr, except with `--quiet` (a located one, `file:line:col: warning: ...`,
  with its source line, caret and hint); errors are the CLI's, always shown; where stderr is a
  terminal (and not under `--json`) their messages and hints are wrapped to its width
  (`message_width`), elsewhere one line each, for tools that read them;
- steps (`--verbose`) go to stderr with the seconds since the command started;
- progress bars (tqdm) go to stderr only when it is a terminal, not with `--quiet` or `--json`,
  and only for work that has already taken a second (tqdm's `delay`), so quick runs never flash;
  as wide as the terminal, or $COLUMNS (else 80) where it says 0 columns, less the last column
  and two for the `^C` a Ctrl-C echoes after it (the whole line is cleared then).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout, suppress
from dataclasses import dataclass, field
from typing import Any, TextIO

from rasp.errors import Diagnostic
from rasp.sources import Progress
from rasp.tools.interrupts import settle_interrupts

PROGRESS_DELAY_S = 1.0  # a bar appears only once the work has taken this long
REDRAW_S = 0.5  # a stage without updates is redrawn this often (its elapsed time)
ECHO_ROOM = 2  # columns a bar leaves free for the `^C` of a Ctrl-C (echoed after it)
# a message is wrapped to no fewer columns (a narrower terminal wraps it again itself: a few
# words a line would read worse)
MIN_MESSAGE_WIDTH = 40
_UNITS = {
    "parsing": "chars",
    "running": "statements",
    "guiding samples": "inputs",
    "verifying": "inputs",
    "evaluation orders": "runs",
}


# where results go while `results_only_on_stdout` sends other prints to stderr (None: stdout)
_results: TextIO | None = None


@contextmanager
def results_only_on_stdout() -> Iterator[None]:
    """Inside the block, `print` goes to stderr and results (`write_stdout`) to stdout: a Python
    program's functions run while a command computes (a tracr Map's, called by run, compile and
    verify), and what they print must not mix with the result (`--json`'s object). Where stdout
    is file descriptor 1, the descriptor itself points at stderr too (`os.write(1, ...)`, a
    subprocess), and results go to a copy of the real one."""
    global _results
    saved = _results
    stdout = _stdout_moved_to_stderr()
    _results = sys.stdout if stdout is None else stdout[0]
    try:
        with redirect_stdout(sys.stderr):
            yield
    finally:
        _results = saved
        if stdout is not None:
            with suppress(OSError):  # (flushed by each write, whose error was the command's)
                stdout[0].close()
            os.dup2(stdout[1], 1)
            os.close(stdout[1])


def _stdout_moved_to_stderr() -> tuple[TextIO, int] | None:
    """Point file descriptor 1 at stderr's and return a stream on a copy of the real stdout (and
    that copy's descriptor, to put back); None where stdout is not descriptor 1 (captured) or
    the descriptors cannot be copied: the `print` redirection alone then."""
    try:
        if sys.stdout is None or sys.stderr is None or sys.stdout.fileno() != 1:
            return None
        stderr_fd = sys.stderr.fileno()
    except (OSError, ValueError):  # (io.UnsupportedOperation is both)
        return None
    flush_stdout()  # what was printed before goes out first, where it was meant to
    try:
        copy = os.dup(1)
    except OSError:
        return None
    try:
        os.dup2(stderr_fd, 1)
    except OSError:
        os.close(copy)
        return None
    stream = open(  # noqa: SIM115 (closed when the block ends)
        copy,
        "w",
        buffering=1,
        encoding=sys.stdout.encoding,
        errors=sys.stdout.errors,
        closefd=False,
    )
    return stream, copy


class StdoutError(OSError):
    """Standard output could not be written (`> /dev/full`): the CLI says so once, on stderr."""


def write_stdout(text: str, end: str = "\n") -> None:
    """`print(text, end=end)`; an OSError writing it, but for a reader that left, is a
    `StdoutError`."""
    try:
        print(text, end=end, file=_results if _results is not None else sys.stdout)
        if _results is not None:  # (a copy of stdout's descriptor: written before it is closed)
            _results.flush()
    except BrokenPipeError:
        raise  # (`rasp show M | head`: the CLI's own quiet exit)
    except OSError as exc:
        raise StdoutError(exc.errno, exc.strerror) from None


def flush_stdout() -> None:
    """Flush what was printed (a `StdoutError` where it cannot be written), so that the failure
    is the command's, not an 'Exception ignored' at the interpreter's exit."""
    if sys.stdout is None:
        return
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise StdoutError(exc.errno, exc.strerror) from None


@dataclass
class Console:
    quiet: bool = False
    verbose: bool = False
    json: bool = False
    started: float = field(default_factory=time.monotonic)
    located: list[Diagnostic] = field(default_factory=list)  # the `warn_at` warnings so far

    @classmethod
    def from_args(cls, args: Any) -> Console:
        return cls(
            quiet=bool(getattr(args, "quiet", False)),
            verbose=bool(getattr(args, "verbose", False)),
            json=bool(getattr(args, "json", False)),
        )

    def result(self, text: str) -> None:
        write_stdout(text)

    def result_json(self, value: Any) -> None:
        settle_interrupts()  # (the command's one object: a Ctrl-C now must not add another)
        write_stdout(json.dumps(value, ensure_ascii=False, default=str))

    def note(self, text: str) -> None:
        if not (self.quiet or self.json):
            write_stdout(text)

    def warn(self, text: str) -> None:
        if not self.quiet:
            print(Diagnostic(text, severity="warning").render(width=self.width), file=sys.stderr)

    def warn_at(self, diagnostic: Diagnostic) -> None:
        """A located warning (`file:line:col: warning: ...`, its line, caret and hint), kept in
        `located` for a `--json` object's `warnings`."""
        self.located.append(diagnostic)
        if not self.quiet:
            print(diagnostic.render(width=self.width), file=sys.stderr)

    @property
    def width(self) -> int | None:
        """The columns a message on stderr is wrapped to (`message_width`)."""
        return message_width(sys.stderr, json=self.json)

    def step(self, text: str) -> None:
        if self.verbose:
            print(f"[{time.monotonic() - self.started:7.2f}s] {text}", file=sys.stderr, flush=True)

    @property
    def shows_progress(self) -> bool:
        return not (self.quiet or self.json) and _is_terminal(sys.stderr)

    @contextmanager
    def progress(self) -> Iterator[Progress | None]:
        """A `progress(stage, done, total)` callback drawing one bar per stage, or None; where no
        bar is drawn (stderr not a terminal) under --verbose, one step line per stage, so a log
        shows where a long compile spends its time."""
        if not self.shows_progress:
            yield self._stage_steps() if self.verbose else None
            return
        bars = _StageBars()
        try:
            yield bars
        except KeyboardInterrupt:
            bars.close(interrupted=True)
            raise
        finally:
            bars.close()

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """`name` as a stage of its own while its work runs (importing torch took seconds with
        nothing on the screen): a bar on a terminal, a --verbose line in a log."""
        with self.progress() as progress:
            if progress is not None:
                progress(name, 0, 1)
            yield

    def _stage_steps(self) -> Progress:
        last: list[str] = []

        def stage_step(stage: str, done: int, total: int) -> None:
            if stage not in last:  # a stage's first call only (parsing reports many)
                last[:] = [stage]
                self.step(stage)

        return stage_step


class _StageBars:
    """One tqdm bar at a time; a new stage closes the previous stage's bar.

    tqdm draws a delayed bar only when it is updated after the delay, and a compile's stages are
    each one update (done 0 of 1) followed by seconds of work: their bars never appeared. A
    thread redraws the current bar once the delay has passed, and then every REDRAW_S (its time
    keeps counting)."""

    def __init__(self) -> None:
        self.started = False  # a bar was made (and maybe drawn) in this block
        self.stage: str | None = None
        self.bar: Any = None
        self._lock = threading.Lock()
        self._stop: threading.Event | None = None

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage != self.stage:
            self.close()
            from tqdm import tqdm

            columns, lines = _bar_shape(sys.stderr)
            with self._lock:
                self.started = True
                self.stage = stage
                self.bar = tqdm(
                    total=total,
                    desc=stage,
                    unit=_UNITS.get(stage, "it"),
                    unit_scale=True,
                    delay=PROGRESS_DELAY_S,
                    leave=False,
                    file=sys.stderr,
                    ncols=columns,
                    nrows=lines,
                )
                # tqdm's own size reads a terminal of 0 columns (under `script`) as -1 x -1 and
                # then draws nothing: ours, asked at each redraw as tqdm's dynamic_ncols would be
                self.bar.dynamic_ncols = _bar_shape
                self._stop = threading.Event()
            threading.Thread(target=self._redraw, args=(self.bar, self._stop), daemon=True).start()
        with self._lock:
            self.bar.update(done - self.bar.n)

    def _redraw(self, bar: Any, stop: threading.Event) -> None:
        wait = PROGRESS_DELAY_S
        while not stop.wait(wait):
            with self._lock:
                if stop.is_set():
                    return
                bar.refresh()
                bar.last_print_t = bar._time()  # drawn: its close then clears the line
            wait = REDRAW_S

    def close(self, *, interrupted: bool = False) -> None:
        """Clear the bar's line; `interrupted` (Ctrl-C): the whole line, the `^C` the terminal
        echoed after the bar too (`_bar_shape` leaves it room: it wrapped to the next line,
        and the bar was cleared there, leaving it on screen)."""
        with self._lock:
            if self._stop is not None:
                self._stop.set()
            if self.bar is not None:
                self.bar.close()
            self.bar = self.stage = self._stop = None
            if interrupted and self.started:
                with suppress(OSError, ValueError):
                    sys.stderr.write("\r\x1b[K")  # (ANSI: erase the line, as tqdm moves up)
                    sys.stderr.flush()


def _bar_shape(stream: Any) -> tuple[int, int]:
    """`terminal_shape` less the two columns of the `^C` a terminal echoes after the bar."""
    columns, lines = terminal_shape(stream)
    return max(columns - ECHO_ROOM, 1), lines


def not_installed(what: str, exc: ModuleNotFoundError) -> str:
    """`what needs the Python package 'P', which is not installed`: P is the package to install,
    the missing module's top level (a `transformer.digests` import fails as `transformer.digests`
    where `transformer` itself is missing from sys.modules)."""
    package = (exc.name or "?").partition(".")[0]
    return f"{what} needs the Python package '{package}', which is not installed"


def terminal_shape(stream: Any) -> tuple[int, int]:
    """The columns and lines a bar on `stream` may use, each one less than the terminal's (as tqdm
    takes them: a line filling the last column wraps on some terminals). Where the terminal says
    0 (under `script`, a serial console) or nothing: $COLUMNS and $LINES, else 80 x 24, as
    `shutil.get_terminal_size` falls back."""
    try:
        columns, lines = os.get_terminal_size(stream.fileno())
    except (AttributeError, OSError, ValueError):  # no descriptor, or not a terminal
        columns = lines = 0
    return (columns or _env_size("COLUMNS", 80)) - 1, (lines or _env_size("LINES", 24)) - 1


def message_width(stream: Any, *, json: bool = False) -> int | None:
    """The columns an error's or warning's message and hint are wrapped to on `stream`
    (`Diagnostic.render`'s `width`): a terminal's, as `terminal_shape` takes them (a refusal can
    run to 200 characters), else None, one line each: in a pipe or a file, and under `--json`,
    tools grep the lines and goldens hold them."""
    if json or not _is_terminal(stream):
        return None
    return max(terminal_shape(stream)[0], MIN_MESSAGE_WIDTH)


def _env_size(name: str, default: int) -> int:
    try:
        size = int(os.environ.get(name, ""))
    except ValueError:
        return default
    return size if size > 0 else default


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
