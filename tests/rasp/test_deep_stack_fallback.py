"""`rasp.deep_stack.run_deep` where no thread with a big stack can be had (a platform that cannot
set stack sizes, or no memory for one): the walk runs on the caller's thread with Python's usual
limit, a program deeper than that is a located error that says why, never a crash, and the
recursion limit and stack size are left as they were."""

from __future__ import annotations

import sys
import threading
from typing import Any

import pytest

from rasp import deep_stack
from rasp.deep_stack import fallback_note, run_deep
from rasp.errors import RaspRuntimeError
from rasp.interpreter import Interpreter
from rasp.parser import parse
from rasp.tools.repl import ReplSession

DEEP = "def d(n) { return 0 if n == 0 else 1 + d(n - 1); }\nx = d(600);"


def _no_stack_size(size: int = 0) -> int:
    raise RuntimeError("setting stack size not supported")


def _no_thread(self: threading.Thread) -> None:
    raise RuntimeError("can't start new thread")


@pytest.fixture(params=["stack_size", "start"])
def no_big_stack(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "stack_size":
        monkeypatch.setattr(deep_stack.threading, "stack_size", _no_stack_size)
        return "its stack size cannot be set (setting stack size not supported)"
    monkeypatch.setattr(deep_stack.threading.Thread, "start", _no_thread)
    return "it could not start (can't start new thread)"


def test_the_walk_runs_here_and_the_limit_is_left_as_it_was(
    no_big_stack: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = sys.getrecursionlimit()
    patched = no_big_stack.startswith("its stack size")
    sizes: list[int] = []  # what run_deep set the stack size to, in order
    if not patched:
        # (a spy, not a reading of the process-wide size after: another test's deep thread still
        # ending on a loaded machine may be setting it meanwhile)
        real = threading.stack_size

        def spy(size: int = 0) -> int:
            sizes.append(size)
            return real(size)

        monkeypatch.setattr(deep_stack.threading, "stack_size", spy)
    here = threading.get_ident()
    assert run_deep(threading.get_ident) == here
    assert sys.getrecursionlimit() == before
    if not patched:  # set for the thread, then set back to what it was
        assert len(sizes) == 2 and sizes[0] == deep_stack.STACK_BYTES
    note = fallback_note()
    assert note is not None and no_big_stack in note and "256 MiB" in note


def test_a_deep_program_is_a_located_error_that_says_why(no_big_stack: str) -> None:
    interpreter = Interpreter()
    stmts = parse(DEEP, "deep.rasp").statements
    interpreter.exec_statement(stmts[0])
    with pytest.raises(RaspRuntimeError) as caught:
        interpreter.exec_statement(stmts[1])
    text = caught.value.render()
    assert text.startswith("deep.rasp:2:1: error: the program nests too deeply"), text
    assert no_big_stack in text and "frames were available" in text
    assert interpreter.exec_statement(parse("y = d(5);").statements[0]).values == (5,)


def test_the_repl_goes_on(no_big_stack: str) -> None:
    session = ReplSession()
    out = session.feed(DEEP.replace("\n", " "))
    assert "error: the program nests too deeply" in out and no_big_stack in out
    assert session.feed("y = d(3);") == "    value: y =  3"


def test_with_the_big_stack_there_is_no_note() -> None:
    def deep(n: int) -> Any:
        return 0 if n == 0 else 1 + deep(n - 1)

    assert run_deep(lambda: deep(5000)) == 5000
    assert fallback_note() is None


def test_ctrl_c_while_the_thread_starts_leaves_the_limit_as_it_was(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def interrupted(self: threading.Thread) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(deep_stack.threading.Thread, "start", interrupted)
    before = sys.getrecursionlimit()
    with pytest.raises(KeyboardInterrupt):
        run_deep(threading.get_ident)
    assert sys.getrecursionlimit() == before
    monkeypatch.undo()
    assert run_deep(lambda: 1) == 1
