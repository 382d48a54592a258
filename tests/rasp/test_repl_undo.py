"""The REPL's undo of a refused statement costs what the statement changed, not the number of
names the session already holds (each statement once copied and sorted every name: feeding 300
generated programs took 21 s)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import rasp
from rasp.tools.repl import ReplSession

RASP = str(Path(rasp.__file__).parent)


def _lines_run(action: Callable[[], Any]) -> int:
    """How many lines of rasp's own code `action` runs (a count of work done, not a timing; the
    standard library's lines would count when the garbage collector happens to run)."""
    count = 0

    def trace(frame: FrameType, event: str, arg: Any) -> Callable[..., Any] | None:
        nonlocal count
        if event == "line" and frame.f_code.co_filename.startswith(RASP):
            count += 1
        return trace

    sys.settrace(trace)
    try:
        action()
    finally:
        sys.settrace(None)
    return count


class _CountingDict(dict):  # type: ignore[type-arg]
    """A scope's names that count how often they are walked through (a copy walks them all)."""

    walks = 0

    def __iter__(self) -> Any:
        _CountingDict.walks += 1
        return super().__iter__()

    def keys(self) -> Any:
        _CountingDict.walks += 1
        return super().keys()

    def items(self) -> Any:
        _CountingDict.walks += 1
        return super().items()


def _session(names: int) -> ReplSession:
    session = ReplSession()
    session.feed("; ".join(f"n{k} = {k}" for k in range(names)) + ";")
    return session


STATEMENTS = [
    "x = tokens + 1;",  # checked on the example and bound
    "y = tokens_int;",  # refused on the example: undone
    "for i in [1, 2] { z = indices + i; }",  # each body statement checked as it runs
]


def test_a_statement_s_work_does_not_grow_with_the_names_defined() -> None:
    small, large = _session(10), _session(300)
    for statement in STATEMENTS:
        _lines_run(lambda: small.feed(statement))  # (first runs warm caches alike)
        _lines_run(lambda: large.feed(statement))
        assert _lines_run(lambda: large.feed(statement)) == _lines_run(
            lambda: small.feed(statement)
        ), statement


def test_a_statement_does_not_copy_the_session_s_names() -> None:
    session = _session(50)
    scope = session.interpreter._globals  # (the top-level names, walked by a copy)
    scope.values = _CountingDict(scope.values)
    for statement in STATEMENTS:
        _CountingDict.walks = 0
        session.feed(statement)
        assert _CountingDict.walks == 0, statement
    assert "y" not in session.interpreter.names() and session.interpreter.get("z") is not None
