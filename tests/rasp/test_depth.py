"""Deep programs: every recursion depth the original RASP accepts runs here (it stops where Python's
1,000 frames do: 108 nested calls for most bodies, 140 for a bare `d(n - 1)`), deeper ones run or are
refused with a located error, never a RecursionError or a crash (rasp.deep_stack)."""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

import pytest

from rasp.deep_stack import RECURSION_LIMIT, run_deep
from rasp.errors import RaspRuntimeError
from rasp.interpreter import MAX_CALL_DEPTH, Interpreter
from rasp.parser import parse
from rasp.sops import evaluate
from tests.rasp.interpreting import run, seq, value

SAME = "select(indices, indices, ==)"
# body of `def d(n)` for each kind of value a recursion builds; n=0 ends it
BODIES = {
    "atom": "0 if n == 0 else 1 + d(n - 1)",
    "bare": "0 if n == 0 else d(n - 1)",
    "map": "indices if n == 0 else d(n - 1) + 1",
    "aggregate": f"indices if n == 0 else aggregate({SAME}, d(n - 1))",
    "selector": f"{SAME} if n == 0 else d(n - 1) and {SAME}",
    "list": "[] if n == 0 else d(n - 1) + [n]",
}
DEPTH = 200  # more than the original's 108 to 140; each call of d(200) nests 201 calls


def _deep(kind: str, depth: int = DEPTH) -> Any:
    return value(f"def d(n) {{ return {BODIES[kind]}; }}\nx = d({depth});")


def test_atoms_and_lists_recurse_deeper_than_the_original() -> None:
    assert _deep("atom") == DEPTH
    assert _deep("bare") == 0
    assert _deep("list") == list(range(1, DEPTH + 1))


@pytest.mark.parametrize("kind", ["map", "aggregate"])
def test_sop_chains_recurse_deeper_than_the_original(kind: str) -> None:
    x = _deep(kind)
    expected = [i + DEPTH for i in range(3)] if kind == "map" else [0, 1, 2]
    assert list(evaluate(x, "abc").values) == expected


def test_selector_chains_recurse_deeper_than_the_original() -> None:
    text = f"def d(n) {{ return {BODIES['selector']}; }}\nx = aggregate(d({DEPTH}), tokens);"
    assert seq(text, "abc") == ["a", "b", "c"]


def test_a_300_deep_aggregate_chain_evaluates_and_displays() -> None:
    interp = run(
        "def d(n) { return tokens if n == 0 else "
        "aggregate(select(indices, length - indices - 1, ==), d(n - 1)); }\nx = d(301);"
    )
    x = interp.get("x")
    assert list(evaluate(x, "abc").values) == ["c", "b", "a"]
    assert "x" in str(x.label)


def test_calls_deeper_than_the_guard_are_refused_at_the_call() -> None:
    with pytest.raises(RaspRuntimeError, match=f"calls nest deeper than {MAX_CALL_DEPTH}"):
        _deep("atom", MAX_CALL_DEPTH)


def test_a_body_too_deep_for_the_raised_limit_is_refused_not_a_recursion_error() -> None:
    # 60 parentheses around each call: more Python frames than RECURSION_LIMIT in all
    nested = "(1 + " * 60 + "d(n - 1)" + ")" * 60
    interp = Interpreter()
    program = parse(f"def d(n) {{ return 0 if n == 0 else {nested}; }}\nx = d(900);", "t.rasp")
    with pytest.raises(RaspRuntimeError, match="nests too deeply") as caught:
        interp.exec_program(program)
    assert caught.value.span is not None and caught.value.span.line == 2


def test_run_deep_raises_the_limit_only_while_it_runs() -> None:
    before = sys.getrecursionlimit()
    seen = run_deep(lambda: (sys.getrecursionlimit(), run_deep(threading.get_ident)))
    assert seen[0] >= RECURSION_LIMIT
    assert seen[1] != threading.get_ident()  # on its own thread; a nested run_deep stays there
    assert sys.getrecursionlimit() == before


def test_run_deep_passes_exceptions_on() -> None:
    def interrupted() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_deep(interrupted)


def test_run_deep_from_two_threads_restores_the_limit_when_the_last_ends() -> None:
    before = sys.getrecursionlimit()
    a_running, a_done = threading.Event(), threading.Event()

    def a() -> None:
        a_running.set()

    def b() -> None:
        a_running.wait(5)
        run_deep(lambda: a_done.wait(5))  # starts while a's limit is raised, ends after a

    other = threading.Thread(target=b)
    other.start()
    run_deep(lambda: (a(), time.sleep(0.2)))
    a_done.set()
    other.join(10)
    assert sys.getrecursionlimit() == before


def test_a_deep_run_sees_the_callers_context_variables() -> None:
    import contextvars

    from rasp.deep_stack import run_deep

    flag: contextvars.ContextVar[str] = contextvars.ContextVar("flag", default="unset")
    flag.set("set by the caller")
    assert run_deep(flag.get) == "set by the caller"


def test_a_nested_run_deep_stays_on_its_thread_and_statements_leave_no_threads() -> None:
    outer, inner = run_deep(lambda: (threading.get_ident(), run_deep(threading.get_ident)))
    assert outer == inner != threading.get_ident()
    interp = Interpreter()
    before = threading.active_count()
    for stmt in parse("x = 1;\n" * 1000).statements:  # one deep thread per statement
        interp.exec_statement(stmt)
    assert threading.active_count() == before


def test_ctrl_c_while_waiting_interrupts_the_deep_run() -> None:
    import os
    import signal

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # (pytest's may differ)
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))

    def spin() -> str:
        end = time.monotonic() + 20
        while time.monotonic() < end:  # (Python bytecode: an async exception lands here)
            pass
        return "not interrupted"

    try:
        timer.start()
        started = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            run_deep(spin)
        assert time.monotonic() - started < 10
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert sys.getrecursionlimit() < RECURSION_LIMIT
