"""A command run with one of its output streams on a pseudo-terminal of a given width ($COLUMNS
unset: the terminal's own size), as a user's shell runs it; the other stream piped."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def on_terminal(
    args: list[str], columns: int, stream: str, stdin: bytes | None = None
) -> tuple[subprocess.CompletedProcess[bytes], list[str]]:
    """`python -m rasp ARGS` with `stream` ("stdout" or "stderr") on a terminal `columns` wide:
    the finished process (the other stream captured) and the terminal's lines."""
    done, shown = written_to_terminal(args, columns, stream, stdin)
    return done, shown.replace("\r\n", "\n").splitlines()


def written_to_terminal(
    args: list[str], columns: int, stream: str, stdin: bytes | None = None
) -> tuple[subprocess.CompletedProcess[bytes], str]:
    """`on_terminal`, but what was written to the terminal as it was written (its `\r`s, a
    progress bar's redraws and escapes)."""
    main, side = pty.openpty()
    fcntl.ioctl(side, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    streams = {stream: side, "stdout" if stream == "stderr" else "stderr": subprocess.PIPE}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "rasp", *args], input=stdin, env=env, timeout=120, **streams
        )
    finally:
        os.close(side)
    shown = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:  # the other side closed
            break
        if not chunk:
            break
        shown += chunk
    os.close(main)
    return done, shown.decode()
