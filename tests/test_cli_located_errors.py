"""Errors of the command line that have a place in the program are located there (file:line:col,
the line, a caret), with a hint that fits; errors of an argument name the argument and exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from rasp.tools.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path: Path, text: str, name: str = "prog.rasp") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_an_output_that_is_a_number_is_located_at_its_assignment(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path, "y = tokens;\nx = 3;\n")
    code, out, err = run(capsys, "run", path, "--input", "abc")
    assert (code, out) == (1, "")
    assert err.splitlines()[:3] == [
        f"{path}:2:1: error: 'x' is a number (3), not an s-op",
        "    x = 3;",
        "    ^",
    ]
