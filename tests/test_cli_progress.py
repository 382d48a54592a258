"""Progress bars of the commands that compile and verify: drawn only on a terminal, never under
--json or --quiet, one per stage of a long compile.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("transformer")

from tests.cli_helpers import run


def test_verify_shows_progress_only_on_a_terminal(
    capsys: pytest.CaptureFixture[str], reverse_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = ["verify", str(reverse_file), "--vocab", "ab", "--max-len", "5", "--samples", "0"]
    code, out, err = run(capsys, *argv)
    assert code == 0 and err == "" and "62 inputs" in out
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.setattr("rasp.tools.console.PROGRESS_DELAY_S", 0.0)  # a bar at once, however quick
    code, out, err = run(capsys, *argv)
    assert code == 0 and "verifying" in err and "/62.0" in err and "62 inputs" in out
    # the evaluation-order sweep after the comparison (12 s of a 22 s verify) has a bar of its
    # own, one step per run, where the comparison's bar stood full
    assert "evaluation orders" in err and "/16.0 [" in err
    for quiet in (["--json"], ["--quiet"]):  # machine output or a quiet run: no bar
        code, out, err = run(capsys, *argv, *quiet)
        assert code == 0 and err == "", quiet
    # guiding samples runs the interpreter on each: a bar of its own
    argv = ["verify", str(reverse_file), "--vocab", "ab", "--max-len", "6", "--exhaustive-len", "2"]
    code, out, err = run(capsys, *argv, "--samples", "30")
    assert code == 0 and "guiding samples" in err and "/30.0" in err and "36 inputs" in out
    code, out, err = run(capsys, *argv, "--samples", "30", "--sampling", "uniform")
    assert code == 0 and "guiding samples" not in err and "verifying" in err


def test_a_long_compile_stage_shows_its_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    """A compile's stages are each one call (done 0 of 1) and then seconds of work; tqdm draws a
    delayed bar only when updated after its delay, so no compile stage ever showed a bar (the
    certify of most_freq at N = 300 takes 2.5 s). It is drawn once the delay has passed, with its
    time, and cleared when the next stage starts."""
    import io
    import time

    from rasp.tools import console

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    monkeypatch.setattr(sys, "stderr", stream)
    monkeypatch.setattr(console, "PROGRESS_DELAY_S", 0.05)
    with console.Console().progress() as bars:
        assert bars is not None
        bars("compiling: certify", 0, 1)
        time.sleep(0.6)
        shown = stream.getvalue()
        bars("compiling: write", 0, 1)  # quick: never drawn
    assert "compiling: certify" in shown and "0.00/1.00" in shown
    rest = stream.getvalue()[len(shown) :]
    assert "compiling: write" not in rest and rest.endswith("\r")  # the line cleared
    # a pipe: nothing at all
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    with console.Console().progress() as bars:
        assert bars is None


def test_the_compile_notes_its_size_prediction() -> None:
    """The size prediction and the program's rewrites ran before the first stage was noted:
    seconds without a bar at a large N."""
    from compiler import compile_sop
    from tests.compiler import sop_builders as B

    stages: list[str] = []
    compile_sop(B.hist(), list("ab"), 65, progress=lambda s, *_: stages.append(s))
    assert stages[:2] == ["compiling: predict the size", "compiling: prepare the program"]


@pytest.mark.parametrize(("env", "width"), [(None, 80), ("40", 40)])
def test_a_terminal_of_zero_columns_still_shows_the_bar(
    monkeypatch: pytest.MonkeyPatch, env: str | None, width: int
) -> None:
    """Under `script` a terminal says it has 0 columns and 0 lines (`stty size`: 0 0); tqdm read
    that as -1 x -1 and drew nothing. A bar then takes $COLUMNS, else 80 columns."""
    import io
    import os
    import time

    from rasp.tools import console

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

        def fileno(self) -> int:
            return 2

    stream = Terminal()
    monkeypatch.setattr(sys, "stderr", stream)
    monkeypatch.setattr(os, "get_terminal_size", lambda fd=None: os.terminal_size((0, 0)))
    if env is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", env)
    monkeypatch.setattr(console, "PROGRESS_DELAY_S", 0.05)
    with console.Console().progress() as bars:
        assert bars is not None
        bars("verifying", 0, 10**6)
        time.sleep(0.6)
        shown = stream.getvalue()
    assert "verifying" in shown and "0.00/1.00M" in shown
    lines = [line for line in shown.split("\r") if line.strip()]
    # the bar fills the width, less a column, and two for a Ctrl-C's `^C`
    assert lines and max(map(len, lines)) == width - 3
