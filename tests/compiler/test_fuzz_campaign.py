"""The fuzz campaign's time limit (tests/compiler/fuzz_campaign.py): each seed runs in a process
of its own, so a seed past its limit is stopped, not left computing beside the next ones."""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Iterator

import pytest

from rasp.deep_stack import run_deep


@pytest.fixture
def stop() -> Iterator[threading.Event]:
    """Ends a spinning compile left behind in this process (as the campaign's alarm used to)."""
    event = threading.Event()
    yield event
    event.set()


def test_a_slow_seed_leaves_nothing_running(
    monkeypatch: pytest.MonkeyPatch, stop: threading.Event
) -> None:
    """A compile that never ends, in the deep-stack thread like the compiler's own walks: the
    seed is reported SLOW, fails the campaign, and no thread or process of it keeps the CPU.
    (The campaign used SIGALRM, which interrupted only the waiting main thread: the compile
    went on in its thread, and every later seed's timing shared the CPU with it.)"""
    import fuzz_campaign

    def endless(*args: object, **kwargs: object) -> None:
        def spin() -> None:
            while not stop.is_set():
                pass

        run_deep(spin)

    monkeypatch.setattr(fuzz_campaign, "compile_sop", endless)
    before = set(threading.enumerate())
    said: list[str] = []
    assert fuzz_campaign.run("plain", range(5, 6), 4, 1, said.append) == 1
    # over its CPU limit, or the wall clock's backstop on a busy machine
    assert said[0].startswith("SLOW plain 5: over ") and len(said) == 2
    assert said[1] == "plain seeds 5..5: 0 compiled and agreed, 0 refused, 1 failed"
    assert [t.name for t in set(threading.enumerate()) - before if t.is_alive()] == []
    assert multiprocessing.active_children() == []


def test_a_seed_whose_process_dies_is_a_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    """A crash that ends the process (a segfault in native code, here an exit) is reported
    with its exit code, and the campaign goes on to the next seed."""
    import fuzz_campaign

    def crash(*args: object, **kwargs: object) -> None:
        os._exit(3)

    monkeypatch.setattr(fuzz_campaign, "compile_sop", crash)
    said: list[str] = []
    assert fuzz_campaign.run("plain", range(5, 7), 4, 120, said.append) == 2
    assert said == [
        "FAIL plain 5: its process ended without an answer (exit code 3)",
        "FAIL plain 6: its process ended without an answer (exit code 3)",
        "plain seeds 5..6: 0 compiled and agreed, 0 refused, 2 failed",
    ]


def test_reasons_prints_each_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--reasons`: a refusal is a REFUSED line with its first reason (to count them by reason
    and rerun one of each); without it a refusal prints nothing."""
    import fuzz_campaign

    from rasp.errors import CompileError, Diagnostic

    def refuse(*args: object, **kwargs: object) -> None:
        raise CompileError([Diagnostic("'x' cannot be compiled\nmore detail")])

    monkeypatch.setattr(fuzz_campaign, "compile_sop", refuse)
    said: list[str] = []
    assert fuzz_campaign.run("plain", range(5, 6), 4, 120, said.append, reasons=True) == 0
    assert said == [
        "REFUSED plain 5: 'x' cannot be compiled",
        "plain seeds 5..5: 0 compiled and agreed, 1 refused, 0 failed",
    ]
    said.clear()
    assert fuzz_campaign.run("plain", range(5, 6), 4, 120, said.append) == 0
    assert said == ["plain seeds 5..5: 0 compiled and agreed, 1 refused, 0 failed"]
