"""Ctrl-C (SIGINT) at any moment of a `rasp` process: one `interrupted` line, exit status 130,
never a traceback nor a death by the signal, and under --json the command's one object.

Each test starts `python -m rasp` with `RASP_TEST_PAUSE_AT` naming where it should wait, and sends
SIGINT once it says it waits there: no sleep guessing when the process got that far. Before, a
Ctrl-C while the CLI was imported (its first half second) printed a traceback and the process died
by the signal (status -2), and one while the interrupt was reported cut the report short the same
way."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_cli_json_interrupt import VERIFY_FAILURE  # the keys of a failed verify --json

from rasp.tools import interrupts

ROOT = Path(__file__).resolve().parent.parent
REVERSE = ROOT / "programs" / "reverse.rasp"
VERIFY = ["verify", str(REVERSE), "--vocab", "ab", "--max-len", "3", "--json"]

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def _interrupted(argv: list[str], *points: str) -> tuple[int, str, str]:
    """`rasp ARGV` paused at each of `points` in turn and sent SIGINT there, then a line on stdin
    at `exit`, where the signal is ignored outright: status, stdout, and stderr after the last
    `paused at` line."""
    env = {**os.environ, interrupts.PAUSE_VARIABLE: ",".join(points), "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "rasp", *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert process.stderr is not None and process.stdin is not None
    for point in points:
        line = process.stderr.readline()
        if line != f"paused at {point}\n":
            process.kill()
            out, err = process.communicate()
            pytest.fail(f"expected to pause at {point}, got {line!r}; {err}")
        process.send_signal(signal.SIGINT)
        if point == "exit":
            process.stdin.write("\n")
            process.stdin.flush()
    out, err = process.communicate(timeout=120)
    return process.returncode, out, err


def _one_object(out: str) -> dict[str, Any]:
    data = json.loads(out)  # (two objects would not parse)
    assert isinstance(data, dict)
    return data


@pytest.mark.parametrize("point", ["start", "read", "command"])
def test_an_interrupt_at_any_moment_is_one_line_and_130(point: str) -> None:
    # `start`: the CLI not imported yet (a traceback and status -2 before)
    code, out, err = _interrupted(VERIFY, point)
    assert (code, err) == (130, "interrupted\n")
    data = _one_object(out)
    assert list(data) == VERIFY_FAILURE and data["error"] == "interrupted"
    assert (data["checked"], data["failures"], data["max_len"]) == (0, 0, 3)


def test_compile_interrupted_while_loading_still_names_its_output(tmp_path: Path) -> None:
    out_file = tmp_path / "r.safetensors"
    argv = ["compile", str(REVERSE), "--vocab", "ab", "--max-len", "3", "-o", str(out_file)]
    code, out, err = _interrupted([*argv, "--json"], "start")
    data = _one_object(out)
    assert code == 130 and err.endswith("interrupted\n") and "Traceback" not in err
    assert list(data) == ["ok", "output", "error", "location", "refused", "kind"]
    assert data["output"] == str(out_file) and not out_file.exists()


def test_a_second_interrupt_does_not_cut_the_report_short() -> None:
    # the second Ctrl-C arrives while the first is reported: it raised again, out of the handler
    code, out, err = _interrupted(VERIFY, "command", "interrupted")
    assert code == 130 and err.endswith("interrupted\n") and "Traceback" not in err
    assert _one_object(out)["error"] == "interrupted"


@pytest.mark.parametrize("point", ["done", "exit"])
def test_an_interrupt_after_the_outcome_leaves_it_as_it_is(point: str) -> None:
    # the result is out: a second object (`interrupted`) or status 130 would contradict it, and
    # at `exit` Python's shutdown had put back the default action (killed by the signal: -2)
    argv = ["run", str(REVERSE), "--input", "abc", "--json"]
    code, out, err = _interrupted(argv, point)
    assert (code, err) == (0, "")
    assert json.loads(out) == ["c", "b", "a"]


def test_an_interrupt_while_loading_a_command_that_then_stops_is_130() -> None:
    # `--version` ends the command line's reading before the interrupt was raised
    code, out, err = _interrupted(["--version"], "start")
    assert (code, out, err) == (130, "rasp-forge 0.1.0\n", "interrupted\n")


# -- the handler's states, in this process (its handler is not installed here) -----------------


@pytest.fixture
def state(monkeypatch: pytest.MonkeyPatch) -> type[Any]:
    for name in ("active", "deferring", "pending", "raised", "settled"):
        monkeypatch.setattr(interrupts._State, name, False)
    monkeypatch.setattr(interrupts._State, "seen", 0)
    return interrupts._State


def test_a_noted_interrupt_is_raised_once_the_command_is_known(state: type[Any]) -> None:
    state.deferring = True
    interrupts._on_interrupt(signal.SIGINT, None)
    interrupts._on_interrupt(signal.SIGINT, None)  # (pressed twice while loading: one report)
    assert state.pending
    with pytest.raises(KeyboardInterrupt):
        interrupts.accept_interrupts()
    interrupts.accept_interrupts()  # (once)
    assert not state.pending and state.raised


def test_the_repl_takes_the_next_interrupt_again(state: type[Any]) -> None:
    with pytest.raises(KeyboardInterrupt):
        interrupts._on_interrupt(signal.SIGINT, None)
    interrupts._on_interrupt(signal.SIGINT, None)  # being reported: ignored
    interrupts.rearm_interrupts()  # the REPL handled it and goes on
    with pytest.raises(KeyboardInterrupt):
        interrupts._on_interrupt(signal.SIGINT, None)
    interrupts.settle_interrupts()
    interrupts.rearm_interrupts()
    interrupts._on_interrupt(signal.SIGINT, None)  # settled: ignored however often
    assert state.seen == 4


def test_a_held_block_runs_to_its_end_before_the_interrupt(state: type[Any]) -> None:
    # export's three renames into place: interrupted between two, one export's config was left
    # beside another's weights
    state.active = True
    done = []
    with pytest.raises(KeyboardInterrupt):
        with interrupts.held():
            interrupts._on_interrupt(signal.SIGINT, None)  # noted, not raised inside
            done.append("renamed")
    assert done == ["renamed"] and state.raised and not state.pending
    state.raised = False
    with pytest.raises(OSError), interrupts.held():  # an error in the block: it is the report
        interrupts._on_interrupt(signal.SIGINT, None)
        raise OSError("disk full")
    assert state.pending  # (and the status 130: `finish` reports it)
