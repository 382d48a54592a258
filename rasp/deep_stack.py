"""Running the interpreter's recursive walks on a thread with a big stack.

Evaluating a statement recurses in Python: about 7 frames for each nested call of a `def`, more for
the expressions around the call. Python's default limit of 1,000 frames is what bounds the
original RASP (100 to 140 nested calls, depending on the body); ours must run at least what it runs.
Raising `sys.setrecursionlimit` on the main thread alone could overflow its C stack (8 MiB, and
calls through C code take some of it per frame) and crash the process, so a deep walk runs on a
thread whose stack is big enough for the raised limit, and a program deeper than that still ends
with a RecursionError (reported as "the program nests too deeply"), never a crash.
"""

from __future__ import annotations

import contextvars
import ctypes
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

# Python frames a deep walk may use. A frame takes well under 2 KiB of C stack (measured about
# 600 bytes for a call made through C code), so STACK_BYTES leaves a margin of more than 2.
RECURSION_LIMIT = 50_000
STACK_BYTES = 256 * 1024 * 1024

_state = threading.local()  # .deep: this thread is one of ours
_limit_lock = threading.Lock()
_limit_users = [0, 0]  # deep threads running, and the recursion limit before the first of them


def run_deep(fn: Callable[[], T]) -> T:
    """`fn()` with RECURSION_LIMIT frames to recurse in: on a thread with a big stack (the caller
    waits for it), or here when this is already such a thread, or when no such thread can start
    (then with Python's usual limit). Ctrl-C while waiting interrupts `fn` (KeyboardInterrupt
    raised in it), as it would interrupt `fn` run here."""
    if getattr(_state, "deep", False):
        return fn()
    outcome: dict[str, Any] = {}
    # held until fn ends (not thread.join: an interrupted join can leave the thread seen as ended)
    running = threading.Lock()
    running.acquire()

    context = contextvars.copy_context()  # the caller's context variables (--tracr-compat's)

    def target() -> None:
        _state.deep = True
        try:
            outcome["value"] = context.run(fn)
        except BaseException as exc:  # (re-raised on the caller's thread)
            outcome["error"] = exc
        finally:
            running.release()

    thread = threading.Thread(target=target, name="rasp-deep", daemon=True)
    try:
        old_size = threading.stack_size(STACK_BYTES)
    except (ValueError, RuntimeError) as exc:  # a platform without settable stack sizes
        return _run_here(fn, f"its stack size cannot be set ({exc})")
    # the limit is the interpreter's, not the thread's: raised while only the deep thread runs
    # Python (this one waits), so the main thread never recurses past its own C stack
    _raise_limit()
    try:
        try:
            thread.start()
        finally:
            threading.stack_size(old_size)
    except RuntimeError as exc:  # no memory for the stack: run here, with the usual limit
        _restore_limit()
        return _run_here(fn, f"it could not start ({exc})")
    except BaseException:  # Ctrl-C while it starts: the caller gets its own limit back
        _restore_limit()
        raise
    _state.fallback = None
    try:
        _wait(thread, running)
    finally:
        _restore_limit()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]  # type: ignore[no-any-return]


def fallback_note() -> str | None:
    """Why the last `run_deep` on this thread ran its `fn` with Python's usual recursion limit
    (no thread with a big stack could start), for the "nests too deeply" error to say; None
    when it had the big stack."""
    return getattr(_state, "fallback", None)


def _run_here(fn: Callable[[], T], why: str) -> T:
    """`fn()` on this thread with its usual limit: a deep program then ends with a RecursionError
    sooner, which `fallback_note` explains."""
    _state.fallback = (
        f"this system gave no thread with a {STACK_BYTES // 2**20} MiB stack to run in: {why}; "
        f"so only Python's usual {sys.getrecursionlimit():,} frames were available"
    )
    return fn()


def _raise_limit() -> None:
    # (counted: deep threads started from several threads restore the limit when the last ends)
    with _limit_lock:
        if _limit_users[0] == 0:
            _limit_users[1] = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_limit_users[1], RECURSION_LIMIT))
        _limit_users[0] += 1


def _restore_limit() -> None:
    with _limit_lock:
        _limit_users[0] -= 1
        if _limit_users[0] == 0:
            sys.setrecursionlimit(_limit_users[1])


def _wait(thread: threading.Thread, running: threading.Lock) -> None:
    """Wait until `running` is released; a Ctrl-C meanwhile is passed on to `thread`, whose `fn`
    then ends with KeyboardInterrupt (or has ended already), and the wait goes on."""
    while True:
        try:
            running.acquire()
            return
        except KeyboardInterrupt:
            if running.acquire(blocking=False):
                return  # fn ended meanwhile: its outcome stands
            if thread.ident is not None:
                ctypes.pythonapi.PyThreadState_SetAsyncExc(
                    ctypes.c_ulong(thread.ident), ctypes.py_object(KeyboardInterrupt)
                )
