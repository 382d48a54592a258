"""`rasp verify` of a program says what it does before its first bar: importing the compiler and
torch (seconds, more on a cold start) and the compile's stages showed nothing, where `rasp
compile` draws a bar per stage (a log under --verbose gets a line per stage)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("transformer")

from tests.cli_helpers import run


def test_verify_steps_through_loading_and_the_compiles_stages(
    capsys: pytest.CaptureFixture[str], reverse_file: Path
) -> None:
    argv = ["verify", str(reverse_file), "--vocab", "ab", "--max-len", "4", "--samples", "0"]
    code, out, err = run(capsys, *argv, "-v")
    assert code == 0 and "30 inputs" in out
    steps = [line.split("s] ", 1)[1] for line in err.splitlines() if "s] " in line]
    loading = steps.index("loading the compiler and torch")
    compiling = next(i for i, step in enumerate(steps) if step.startswith("compiling `"))
    assert loading < compiling
    assert "compiling: analyse values" in steps[compiling:]
    assert "compiling: certify" in steps[compiling:]
    # without --verbose, where stderr is no terminal: nothing
    assert run(capsys, *argv)[2] == ""
