"""A `PROG.py:NAME` target that cannot be read is said as a `.rasp` file's is: a directory is
a directory (it was "no such file"), bytes that are not UTF-8 a located error (it was Python's
codec message with a byte offset), a pipe not a regular file; under --json the one object."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli_helpers import run


def _run(capsys: pytest.CaptureFixture[str], target: str, *extra: str) -> tuple[int, str, str]:
    return run(capsys, "run", target, "--input", "ab", *extra)


def test_a_directory_is_said_to_be_one(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "dir.py").mkdir()
    code, _, err = _run(capsys, f"{tmp_path / 'dir.py'}:x")
    assert (code, err) == (1, f"error: cannot read {tmp_path / 'dir.py'}: it is a directory\n")


def test_a_missing_file_is_said_as_for_a_rasp_program(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _, _, rasp_err = _run(capsys, str(tmp_path / "missing.rasp"))
    code, _, err = _run(capsys, f"{tmp_path / 'missing.py'}:x")
    assert code == 1 and err == rasp_err.replace("missing.rasp", "missing.py")


def test_bytes_that_are_not_utf8_are_a_located_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    program = tmp_path / "bad.py"
    program.write_bytes(b"x = 1\ny = '\xff'\n")
    code, out, err = _run(capsys, f"{program}:x", "--json")
    assert code == 1 and "codec" not in err
    assert err.startswith(f"{program}:2:6: error: the program is not UTF-8 text: byte 0xff")
    assert json.loads(out)["location"] == f"{program}:2:6"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_pipe_is_not_a_regular_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.py")
    code, _, err = _run(capsys, f"{tmp_path / 'pipe.py'}:x")
    assert code == 1 and err.startswith(f"error: cannot read {tmp_path / 'pipe.py'}: not a regular")


@pytest.mark.parametrize(
    ("line", "hint", "flags"),
    [
        # RASP's input s-ops are not tracr's: the hint says how numbers reach a tracr program
        ("x = rasp.Map(int, rasp.tokens_int)", "tracr's API has one input s-op, tokens", ()),
        # a lowercase or misspelt name of tracr's API: Python says "Did you mean" only with a
        # traceback, which the command does not print
        ("x = rasp.select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ)", "'Select'", ()),
        ("x = rasp.Slect(rasp.tokens, rasp.tokens, rasp.Comparison.EQ)", "'Select'", ()),
        ("x = rasp.map(int, rasp.tokens)", "'Map'", ("--tracr-compat",)),
    ],
)
def test_a_name_tracr_api_lacks_gets_a_hint(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, line: str, hint: str, flags: tuple[str, ...]
) -> None:
    program = tmp_path / "p.py"
    imports = "from tracr.rasp import rasp" if flags else "from rasp import tracr as rasp"
    program.write_text(f"{imports}\n{line}\n", encoding="utf-8")
    code, _, err = _run(capsys, f"{program}:x", *flags)
    assert code == 1 and "raised AttributeError while loading" in err
    assert f"hint: {hint}" in err or f"hint: did you mean {hint}?" in err, err
    assert "error in the Python program itself" not in err
