"""`rasp verify` of a program, `rasp run --model` and `rasp draw` say what they do before their
first result: importing the compiler and torch (seconds, more on a cold start) and verify's
compile stages showed nothing, where `rasp compile` draws a bar per stage (a log under --verbose
gets a line per stage)."""

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


def test_run_model_and_draw_say_what_loads(
    capsys: pytest.CaptureFixture[str], reverse_file: Path, tmp_path: Path
) -> None:
    # `rasp run --model` spent 7 s importing torch before its first line, `rasp draw` seconds
    # after "compiled and certified" loading torch and matplotlib
    model = str(tmp_path / "m.safetensors")
    argv = ["compile", str(reverse_file), "--vocab", "ab", "--max-len", "4", "-o", model, "-q"]
    assert run(capsys, *argv)[0] == 0
    code, out, err = run(capsys, "run", "--model", model, "--input", "ab", "-v")
    assert code == 0 and out == "[b, a] (strings)\n"
    assert "s] loading torch" in err.splitlines()[0]
    pytest.importorskip("matplotlib")
    argv = ["draw", str(reverse_file), "--input", "ab", "-o", str(tmp_path / "p.png"), "-v"]
    code, _, err = run(capsys, *argv)
    steps = [line.split("s] ", 1)[1] for line in err.splitlines() if "s] " in line]
    assert code == 0 and steps.index("compiled and certified") < steps.index("drawing")
