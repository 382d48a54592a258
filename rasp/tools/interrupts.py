"""Ctrl-C in the `rasp` process: one line, `interrupted`, and exit status 130 (128 + SIGINT, the
shell's convention) at any moment after Python's own start-up (`site`, which we cannot reach),
never a traceback nor a death by the signal. `rasp.tools.entry` installs the handler before it imports the CLI (which took half a
second, during which Ctrl-C printed a traceback); only the standard library is loaded here. The
handler:

- while the CLI loads and reads its command line, notes the interrupt; the CLI raises it once it
  knows the command (`accept_interrupts`), so that `--json` still prints the command's object;
- then raises KeyboardInterrupt, once: a second Ctrl-C while the first is being reported is
  ignored (it cut the report short and escaped as a traceback; the REPL, which goes on after an
  interrupt, takes the next one again: `rearm_interrupts`);
- once the outcome is settled (the JSON object or the error is being written, or the command has
  returned: `settle_interrupts`), ignores it: the status is the outcome's. Last, SIGINT is ignored
  outright, since Python puts back the default action while it shuts down, and a late Ctrl-C then
  killed the process by the signal (status -2) after the JSON object said `interrupted`.

Where the handler is not installed (the CLI's `main` called in-process, by tests) they do nothing.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

INTERRUPTED = 130  # 128 + SIGINT
# Test hook: `RASP_TEST_PAUSE_AT=NAME[,NAME...]` makes the process say `paused at NAME` on stderr
# at each named point and wait there for a SIGINT (or a line on stdin), so that a test interrupts
# it at a known moment rather than after a guessed delay.
PAUSE_VARIABLE = "RASP_TEST_PAUSE_AT"
PAUSE_LIMIT_S = 60.0  # a test that never sends the signal does not hang the process forever


class _State:
    """The process's interrupt state (mutable and module-wide: a signal handler has no other
    place to keep it)."""

    active = False  # our handler is installed (the `rasp` process, not an in-process call)
    deferring = False  # the command line is not read yet: an interrupt is only noted
    pending = False  # an interrupt was noted and not raised yet
    raised = False  # a KeyboardInterrupt was raised and is being reported
    settled = False  # the outcome is decided: an interrupt changes nothing
    seen = 0  # interrupts received (what a pause point waits for)


def install() -> bool:
    """Handle SIGINT from now on, noting an interrupt until `accept_interrupts`; False where it
    cannot be handled here (not the main thread: Python's own handling then)."""
    _State.active = _State.deferring = True  # (first: the handler may run at once)
    try:
        signal.signal(signal.SIGINT, _on_interrupt)
    except (ValueError, OSError):
        _State.active = _State.deferring = False
        return False
    return True


def finish(code: int) -> int:
    """The process's status, once the CLI returned `code`: 130 where an interrupt was noted and
    never raised (the command line's reading ended the command: `--help`, a usage error); SIGINT
    is then ignored for the rest of the process."""
    if _State.pending:
        code = report()
    _ignore_interrupts()
    pause_point("exit")
    return code


def accept_interrupts() -> None:
    """The command is known: from now on Ctrl-C raises KeyboardInterrupt, and one noted while the
    CLI loaded is raised now."""
    if not _State.deferring:
        return
    _State.deferring = False
    if _State.pending:
        _State.pending = False
        _State.raised = True
        raise KeyboardInterrupt


@contextmanager
def held() -> Iterator[None]:
    """Inside the block a Ctrl-C is noted and raised once it ends: steps that must all happen or
    none (export's renames into place: an interrupt between two left one export's config beside
    another's weights, which TransformerLens loads as one model)."""
    if not _State.active or _State.deferring or _State.settled or _State.raised:
        yield  # (nothing would raise inside: in-process, still loading, or already reporting)
        return
    _State.deferring = True
    try:
        yield
    except BaseException:  # the error is the report; a noted Ctrl-C still makes the status 130
        _State.deferring = False
        raise
    accept_interrupts()


def settle_interrupts() -> None:
    """The outcome is decided (its report is being written): a later Ctrl-C is ignored, neither a
    second report nor another status."""
    _State.settled = True
    _State.deferring = False


def rearm_interrupts() -> None:
    """A KeyboardInterrupt was handled and the work goes on (the REPL's next line): the next
    Ctrl-C interrupts again."""
    _State.raised = False


def pause_point(name: str) -> None:
    """Where `RASP_TEST_PAUSE_AT` names this point: `paused at NAME` on stderr, then wait for an
    interrupt (whatever the handler makes of it: raised, noted or ignored) or a line on stdin (at
    `exit` SIGINT is ignored outright: the handler never sees it). The points: `start` (the CLI
    not imported yet), `read` (the command line read), `command` (about to run it), `done` (it
    returned), `interrupted` (reporting a Ctrl-C), `exit` (the status decided)."""
    if not _State.active or name not in os.environ.get(PAUSE_VARIABLE, "").split(","):
        return
    seen = _State.seen
    os.write(2, f"paused at {name}\n".encode())
    deadline = time.monotonic() + PAUSE_LIMIT_S
    while _State.seen == seen and time.monotonic() < deadline:
        if select.select([0], [], [], 0.01)[0]:
            os.read(0, 1)
            return


def _on_interrupt(signum: int, frame: FrameType | None) -> None:
    _State.seen += 1
    if _State.deferring:
        _State.pending = True
    elif not (_State.raised or _State.settled):
        _State.raised = True
        raise KeyboardInterrupt


def report() -> int:
    """`interrupted` on stderr (the CLI's error line for it); the status, 130."""
    _State.pending = False
    try:
        print("interrupted", file=sys.stderr, flush=True)
    except (OSError, ValueError):  # stderr closed or gone: the status says it alone
        pass
    return INTERRUPTED


def _ignore_interrupts() -> None:
    """SIGINT ignored for the rest of the process (its shutdown); settled first, so that an
    interrupt the handler has yet to run is dropped too."""
    _State.settled = True
    signal.signal(signal.SIGINT, signal.SIG_IGN)
