"""How the `rasp` command line ends when a command fails: the error line on stderr, `--json`'s
object on stdout, and the exit status (`rasp.tools.cli.main` catches; these say it).

A failure here is a file, memory or internal error (exit 1), or stdout that cannot be written: a
reader that left (141) or a full disk (1). None shows a traceback unless asked (RASP_DEBUG=1,
--verbose).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from pathlib import Path

from rasp.errors import Diagnostic, ErrorKind, RaspError
from rasp.tools.console import StdoutError, flush_stdout, message_width
from rasp.tools.error_json import print_failure
from rasp.tools.interrupts import settle_interrupts
from rasp.tools.pyprogram import is_python_target, split_target


def flushed(code: int) -> int:
    """`code` once what was printed is out; 141 where stdout's reader left, 1 where it cannot be
    written (said on stderr)."""
    try:
        flush_stdout()
    except BrokenPipeError:
        silence_stdout()
        return 141
    except StdoutError as exc:
        silence_stdout()
        print_error(f"error: cannot write standard output: {exc.strerror or exc}")
        return 1
    return code


def failed(
    args: argparse.Namespace | None,
    text: str,
    severity: str = "error",
    kind: ErrorKind = ErrorKind.IO,
) -> int:
    """Exit 1 with `error: TEXT` on stderr and, under --json, the `{ok: false, ...}` object on
    stdout that a `RaspError` gets (a JSON consumer read empty output for these)."""
    settle_interrupts()
    print_json_failure(args, RaspError(text, kind=kind))
    print_error(Diagnostic(text, severity=severity).render(width=stderr_width(args)))
    return 1


def stderr_width(args: argparse.Namespace | None) -> int | None:
    """The columns an error on stderr is wrapped to: its terminal's, else one line (a pipe, a
    file, `--json`: `message_width`)."""
    return message_width(sys.stderr, json=bool(getattr(args, "json", False)))


def print_error(text: str) -> None:
    """`text` on stderr; where stderr cannot take it (`2>&1 | head` whose reader left), the
    status says the outcome alone."""
    try:
        print(text, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def print_json_failure(args: argparse.Namespace | None, err: RaspError) -> None:
    """Under --json, `err`'s object on stdout (shaped as the command's other failures); where
    stdout cannot take it (a full disk, a reader that left), stderr's error line says it alone
    (it raised from the handler: a traceback)."""
    given = vars(args) if args is not None else {}
    try:
        print_failure(bool(given.get("json", False)), err, given.get("command"), given)
        flush_stdout()
    except OSError:
        silence_stdout()


def out_of_memory(exc: RuntimeError) -> bool:
    """Whether torch's allocator ran out (no torch import here: the CLI starts without it)."""
    return type(exc).__name__ == "OutOfMemoryError" or "can't allocate memory" in str(exc)


def memory_text(exc: Exception) -> str:
    reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return f"not enough memory: {reason}"


def internal_error(exc: Exception, args: argparse.Namespace | None) -> int:
    """One line for a bug of ours (called while `exc` is handled: the traceback is its own)."""
    settle_interrupts()
    if os.environ.get("RASP_DEBUG") == "1" or getattr(args, "verbose", False):
        traceback.print_exc()
    text = (
        f"{type(exc).__name__}: {exc} (a bug in rasp-forge: please report it with the command "
        "you ran; RASP_DEBUG=1 shows the traceback)"
    )
    return failed(args, text, severity="internal error", kind=ErrorKind.INTERNAL)


def silence_stdout() -> None:
    """Point stdout at /dev/null, so that Python's final flush meets no broken pipe either."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real stdout (captured, closed): nothing will be flushed
        pass


def os_error_text(exc: OSError, args: argparse.Namespace | None) -> str:
    """`cannot read|write PATH: reason`, by what the command line says PATH is (an OSError does
    not say whether it came from a read or a write: a full disk said "cannot read OUT"); a path
    that is neither (a temporary file) is named without a guess."""
    if exc.filename is None:
        return str(exc)
    path = str(exc.filename)
    reason = (  # (as rasp.sources says it)
        "it is a directory" if isinstance(exc, IsADirectoryError) else exc.strerror or str(exc)
    )
    verb = _os_error_verb(path, args)
    return f"{path}: {reason}" if verb is None else f"cannot {verb} {path}: {reason}"


def _os_error_verb(path: str, args: argparse.Namespace | None) -> str | None:
    """`write` for a path the command writes (-o, --dot, a file in export's -o directory), `read`
    for one it reads (FILE, --model, M, TARGET), None for another."""
    given = vars(args) if args is not None else {}
    written = [given.get("output"), given.get("dot")]
    read = [given.get(key) for key in ("file", "model", "target")]
    read = [split_target(p)[0] if is_python_target(p) else p for p in read]  # (PROG.py:NAME)
    here = Path(path).absolute()
    for verb, paths in (("write", written), ("read", read)):
        for named in paths:
            if not isinstance(named, str | Path):
                continue
            where = Path(named).absolute()
            if here == where or (verb == "write" and here.parent == where):
                return verb
    return None
